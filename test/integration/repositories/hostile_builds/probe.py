# A hostile build step: what an install script, an sdist's setup.py, a setup command or a
# Dockerfile RUN step could try. Each attempt is recorded (reached or not, and what happened)
# in /hostile-probes/<case>.json, which the built image keeps for the test to read.
import base64
import json
import os
import pathlib
import socket
import sys

case = sys.argv[1]
targets = json.loads((pathlib.Path(__file__).resolve().parent / "targets.json").read_text())
results = []


def record(attempt, reached, detail):
    results.append({"attempt": attempt, "reached": reached, "detail": str(detail)[:300]})
    print(f"probe {case}: {attempt}: {'REACHED' if reached else 'blocked'} ({detail})", flush=True)


def split(target):
    host, port = target.rsplit(":", 1)
    return host.strip("[]"), int(port)


def connect(attempt, target):
    try:
        with socket.create_connection(split(target), timeout=5):
            record(attempt, True, "connected")
    except OSError as error:
        record(attempt, False, error)


def through_proxy(attempt, target):
    proxy = os.environ.get("HTTPS_PROXY") or os.environ.get("https_proxy")
    if not proxy:
        return record(attempt, False, "no proxy variable")
    try:
        with socket.create_connection(split(proxy.split("://")[-1].rstrip("/")), timeout=5) as proxy_socket:
            proxy_socket.sendall(f"CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n".encode())
            status = proxy_socket.recv(4096).decode(errors="replace").split("\r\n")[0]
            record(attempt, " 200 " in f"{status} ", status)
    except OSError as error:
        record(attempt, False, error)


def read(attempt, path):
    try:
        record(attempt, True, pathlib.Path(path).expanduser().read_text()[:200])
    except OSError as error:
        record(attempt, False, error)


connect("the Temporal server's port", targets["temporal"])
connect("PostgreSQL", targets["postgres"])
connect("PostgreSQL's default port", "127.0.0.1:5432")
connect("a host that is no registry", targets["nonRegistry"])
through_proxy("the Temporal server's port through the proxy", targets["temporal"])
through_proxy("PostgreSQL through the proxy", targets["postgres"])
through_proxy("a host that is no registry through the proxy", targets["nonRegistry"])
read("~/.npmrc", "~/.npmrc")
read("/root/.npmrc", "/root/.npmrc")
read("the host's npmrc", targets["hostNpmrc"])
canaries = [base64.b64decode(canary).decode() for canary in targets["canaries"]]
leaked = sorted(name for name, value in os.environ.items() if any(canary in value for canary in canaries))
record("credential variables", bool(leaked), ", ".join(leaked) or "none of the worker's")
status = dict(line.split(":\t", 1) for line in pathlib.Path("/proc/self/status").read_text().splitlines() if ":\t" in line)
# Root may own, chown and write its files (CHOWN, DAC_OVERRIDE, FOWNER), nothing more; no setuid binary raises it.
extra = int(status["CapEff"], 16) & ~0b1011
record("privileges beyond owning files", bool(extra) or status["NoNewPrivs"].strip() != "1",
       f"CapEff={status['CapEff'].strip()} NoNewPrivs={status['NoNewPrivs'].strip()}")
# The registries still work: what the build is for.
through_proxy("the package registry through the proxy", targets["registry"])

os.makedirs("/hostile-probes", exist_ok=True)
pathlib.Path(f"/hostile-probes/{case}.json").write_text(json.dumps(results, indent=2))
