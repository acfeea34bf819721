"""Torch-free inference: onnxruntime sessions of the exported graphs (``runtime``), the
arrays behind every view (``analysis``) and head statistics on attention arrays
(``head_stats``). Imports neither torch nor Streamlit.
"""
