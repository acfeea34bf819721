"""#44 item 13: the colour scales stay readable with red-green colour blindness. The
sequential scale is one hue whose lightness falls steadily; the diverging one is lightest
at 0 and darkens along both arms, and its two ends stay apart when deuteranopia or
protanopia is simulated (Viénot, Brettel & Mollon 1999)."""

from __future__ import annotations

import numpy as np

from viz import style

# Linear RGB -> simulated dichromat linear RGB (Viénot et al. 1999, as used by colorspacious)
SIMULATE = {
    "deuteranopia": np.array(
        [[0.29275, 0.70725, 0.0], [0.29275, 0.70725, 0.0], [-0.02234, 0.02234, 1.0]]
    ),  # fmt: skip
    "protanopia": np.array(
        [[0.10889, 0.89111, 0.0], [0.10889, 0.89111, 0.0], [0.00447, -0.00447, 1.0]]
    ),  # fmt: skip
}


def _rgb(colour: str) -> np.ndarray:
    """``"rgb(r,g,b)"`` or ``"#rrggbb"`` as linear RGB in 0..1."""
    if colour.startswith("#"):
        values = [int(colour[i : i + 2], 16) for i in (1, 3, 5)]
    else:
        values = [float(v) for v in colour[colour.index("(") + 1 : -1].split(",")]
    srgb = np.array(values) / 255.0
    return np.where(srgb <= 0.04045, srgb / 12.92, ((srgb + 0.055) / 1.055) ** 2.4)


def _lab(linear: np.ndarray) -> np.ndarray:
    """CIE L*a*b* (D65) of linear RGB."""
    xyz = np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722],
                    [0.0193, 0.1192, 0.9505]]) @ linear / np.array([0.9505, 1.0, 1.089])  # fmt: skip
    f = np.where(xyz > 0.008856, np.cbrt(xyz), 7.787 * xyz + 16 / 116)
    return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])


def _lightness(name: str) -> np.ndarray:
    return np.array([_lab(_rgb(c))[0] for _, c in style.colorscale(name)])


def test_the_sequential_scale_is_one_hue_darkening_steadily():
    light = _lightness(style.SEQUENTIAL)
    assert np.all(np.diff(light) < 0) and light[0] - light[-1] > 60, light


def test_the_diverging_scale_darkens_from_0_and_its_ends_stay_apart_for_dichromats():
    stops = style.colorscale(style.DIVERGING)
    light = _lightness(style.DIVERGING)
    middle = int(np.argmax(light))
    assert 0 < middle < len(light) - 1
    assert np.all(np.diff(light[: middle + 1]) > 0) and np.all(np.diff(light[middle:]) < 0)
    for name, matrix in SIMULATE.items():  # -v and +v, each pair of stops around 0
        for i in range(middle):
            low, high = _rgb(stops[i][1]), _rgb(stops[-1 - i][1])
            a, b = _lab(np.clip(matrix @ low, 0, 1)), _lab(np.clip(matrix @ high, 0, 1))
            # ΔE*ab: 2.3 is just noticeable; over 15 is told apart at a glance
            assert np.linalg.norm(a - b) > 15, (name, stops[i], stops[-1 - i])
