"""deploy/k8s/attnviz.yaml, the several-machines recipe (README "For a course").

kubeconform fetches Kubernetes' own schemas from the network and ``kubectl apply
--dry-run=client`` needs a cluster to ask: neither runs here (a test that skipped
without them would fail ``make test``'s --strict-skips). The check is a structure check: every field the recipe uses, spelled and typed as the API has it
(a schema of that subset, no other field allowed, so a misspelt ``readinesProbe`` fails),
and what the objects must agree on: the labels, the ports, the probes on Streamlit's
health route, the cookie affinity and the websocket's timeouts, and the memory from
this project's measurements.
"""

from __future__ import annotations

import re

import jsonschema
import pytest
import tomllib
import yaml

from deploy.replicas import COOKIE
from tests.helpers import ROOT

MANIFEST = ROOT / "deploy" / "k8s" / "attnviz.yaml"
HEALTH = "/_stcore/health"
SERVER_PEAK_MB = 400  # README "Benchmarks": 251 MB at start, 396 MB after the hostile suite
A = "nginx.ingress.kubernetes.io/"


def obj(props: dict, required: list[str] | None = None) -> dict:
    """A JSON schema object with exactly these properties."""
    return {"type": "object", "properties": props, "required": required or list(props),
            "additionalProperties": False}  # fmt: skip


STR, INT = {"type": "string"}, {"type": "integer", "minimum": 0}
QUANTITY = {"type": "string", "pattern": r"^\d+(\.\d+)?(m|Ki|Mi|Gi)?$"}
LABELS = {"type": "object", "additionalProperties": STR, "minProperties": 1}
META = obj({"name": STR, "labels": LABELS, "annotations": LABELS}, ["name"])
PORT_REF = {"anyOf": [INT, STR]}
PROBE = obj(
    {"httpGet": obj({"path": STR, "port": PORT_REF}), "periodSeconds": INT,
     "timeoutSeconds": INT, "failureThreshold": INT},
    ["httpGet", "periodSeconds", "failureThreshold"],
)  # fmt: skip
CONTAINER = obj(
    {
        "name": STR, "image": STR,
        "ports": {"type": "array", "items": obj({"name": STR, "containerPort": INT})},
        "env": {"type": "array", "items": obj({"name": STR, "value": STR})},
        "resources": obj({"requests": obj({"cpu": QUANTITY, "memory": QUANTITY}),
                          "limits": obj({"memory": QUANTITY})}),
        "startupProbe": PROBE, "readinessProbe": PROBE, "livenessProbe": PROBE,
    }
)  # fmt: skip
DEPLOYMENT = obj(
    {
        "apiVersion": {"const": "apps/v1"}, "kind": {"const": "Deployment"}, "metadata": META,
        "spec": obj({
            "replicas": INT,
            "selector": obj({"matchLabels": LABELS}),
            "strategy": obj({"type": {"const": "RollingUpdate"},
                             "rollingUpdate": obj({"maxUnavailable": PORT_REF,
                                                   "maxSurge": PORT_REF})}),
            "template": obj({
                "metadata": obj({"labels": LABELS}),
                "spec": obj({"terminationGracePeriodSeconds": INT,
                             "containers": {"type": "array", "items": CONTAINER,
                                            "minItems": 1}}),
            }),
        }),
    }
)  # fmt: skip
SERVICE = obj(
    {
        "apiVersion": {"const": "v1"}, "kind": {"const": "Service"}, "metadata": META,
        "spec": obj({"selector": LABELS, "ports": {"type": "array", "items": obj(
            {"name": STR, "port": INT, "targetPort": PORT_REF})}}),
    }
)  # fmt: skip
BACKEND = obj({"service": obj({"name": STR, "port": obj({"name": STR})})})
INGRESS = obj(
    {
        "apiVersion": {"const": "networking.k8s.io/v1"}, "kind": {"const": "Ingress"},
        "metadata": META,
        "spec": obj({"ingressClassName": STR, "rules": {"type": "array", "items": obj({
            "host": STR, "http": obj({"paths": {"type": "array", "items": obj({
                "path": STR, "pathType": {"enum": ["Prefix", "Exact"]},
                "backend": BACKEND})}})})}}),
    }
)  # fmt: skip
SCHEMAS = {"Deployment": DEPLOYMENT, "Service": SERVICE, "Ingress": INGRESS}


@pytest.fixture(scope="module")
def objects() -> dict[str, dict]:
    docs = [d for d in yaml.safe_load_all(MANIFEST.read_text()) if d]
    assert sorted(d["kind"] for d in docs) == sorted(SCHEMAS)
    return {d["kind"]: d for d in docs}


def mb(quantity: str) -> float:
    """A memory quantity (``1Gi``, ``512Mi``) in MB (10**6 bytes)."""
    number, unit = re.fullmatch(r"(\d+(?:\.\d+)?)(Ki|Mi|Gi)?", quantity).groups()
    return float(number) * {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, None: 1}[unit] / 1e6


@pytest.mark.parametrize("kind", sorted(SCHEMAS))
def test_every_field_is_one_the_api_has(objects, kind):
    jsonschema.validate(objects[kind], SCHEMAS[kind])


def test_the_objects_agree_and_the_pods_are_probed_on_streamlits_health(objects):
    deploy, service, ingress = objects["Deployment"], objects["Service"], objects["Ingress"]
    pod = deploy["spec"]["template"]
    assert deploy["spec"]["selector"]["matchLabels"].items() <= pod["metadata"]["labels"].items()
    assert service["spec"]["selector"].items() <= pod["metadata"]["labels"].items()
    (container,) = pod["spec"]["containers"]
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    assert ports == {"http": 8501}  # Streamlit's port, as the image's command says
    (sport,) = service["spec"]["ports"]
    assert sport["targetPort"] in ports
    (rule,) = ingress["spec"]["rules"]
    (path,) = rule["http"]["paths"]
    backend = path["backend"]["service"]
    assert backend == {"name": service["metadata"]["name"], "port": {"name": sport["name"]}}
    for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
        assert container[probe]["httpGet"] == {"path": HEALTH, "port": "http"}, probe
    # Ready again or out of the Service within 10 s; the start may take 180 s.
    ready = container["readinessProbe"]
    assert ready["periodSeconds"] * ready["failureThreshold"] <= 10
    start = container["startupProbe"]
    assert start["periodSeconds"] * start["failureThreshold"] >= 180


def test_the_ingress_keeps_each_browser_on_its_pod_and_the_websocket_open(objects):
    notes = objects["Ingress"]["metadata"]["annotations"]
    assert objects["Ingress"]["spec"]["ingressClassName"] == "nginx"
    assert notes[A + "affinity"] == "cookie" and notes[A + "session-cookie-name"] == COOKIE
    assert notes[A + "affinity-mode"] == "persistent"  # scaling up moves nobody
    assert notes[A + "session-cookie-change-on-failure"] == "true"  # failover, not a 502
    for timeout in ("proxy-read-timeout", "proxy-send-timeout"):
        assert int(notes[A + timeout]) >= 86_400, timeout  # a day
    assert mb(notes[A + "proxy-body-size"].replace("m", "Mi")) >= 50  # the uploader's 50 MB
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert 0 < config["server"]["websocketPingInterval"] < 60  # under a proxy's idle limit


def test_the_memory_is_sized_from_the_measured_server_and_the_upload_budgets(objects):
    (container,) = objects["Deployment"]["spec"]["template"]["spec"]["containers"]
    env = {e["name"]: e["value"] for e in container["env"]}
    limit = mb(container["resources"]["limits"]["memory"])
    request = mb(container["resources"]["requests"]["memory"])
    budgets = 1.048576 * (
        int(env["ATTNVIZ_WORKERS_MEMORY_MB"]) + int(env["ATTNVIZ_OPEN_UPLOADS_MB"])
    )
    assert limit >= SERVER_PEAK_MB + budgets, (limit, budgets)
    assert request >= SERVER_PEAK_MB * 2  # the server and a worker at its measured peak
    assert container["resources"]["requests"]["cpu"] == "2"  # README: two cores a replica
    assert env["MALLOC_ARENA_MAX"] == "2"
    readme = (ROOT / "README.md").read_text()
    assert "deploy/k8s/attnviz.yaml" in readme and "396 MB" in readme
