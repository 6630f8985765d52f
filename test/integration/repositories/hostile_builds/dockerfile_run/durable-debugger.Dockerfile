FROM durable-debugger-sandbox:1
COPY hostile/ /opt/hostile/
RUN python3 /opt/hostile/probe.py dockerfile-run
