# A hostile Maven build step: exec-maven-plugin, bound to the validate phase of the repository's
# pom.xml, runs this while the environment resolves the build (and again in the sandbox, without
# network). Each attempt is recorded in /hostile-probes/maven-exec.json, which the image keeps.
import json
import os
import socket
import sys

targets = json.loads(sys.argv[1])
results = []


def record(attempt, reached, detail):
    results.append({"attempt": attempt, "reached": reached, "detail": str(detail)[:300]})
    print(f"probe maven-exec: {attempt}: {'REACHED' if reached else 'blocked'} ({detail})", flush=True)


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


connect("the Temporal server's port", targets["temporal"])
connect("a host that is no registry", targets["nonRegistry"])
through_proxy("the Temporal server's port through the proxy", targets["temporal"])
through_proxy("a host that is no registry through the proxy", targets["nonRegistry"])
through_proxy("Maven Central through the proxy", "repo.maven.apache.org:443")
try:
    os.makedirs("/hostile-probes", exist_ok=True)
    with open("/hostile-probes/maven-exec.json", "w") as out:
        json.dump(results, out)
except OSError as error:
    print(f"probe maven-exec: not recorded ({error}): the sandbox's root is read-only", flush=True)
