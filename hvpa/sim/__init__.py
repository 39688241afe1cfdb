"""The simulated cluster behind `hvpa sim`: hvpa's real controller against a model, in virtual time.

    apiserver/      the in-process Kubernetes API server (HTTP, watches, metrics APIs)
    clock.py        the event loop whose clock jumps when idle, and the POSIX clock on it
    cluster.py      one tick of the cluster, in order, over the pieces below
    nodes.py        the nodes; scheduler.py binds pods to them
    workloads.py    Deployments and StatefulSets: pods, rolling updates, status
    pods.py         the model's pods and every pod write; kubelet.py starts, readies, kills them
    load.py         a trace's demand spread over the ready pods: usage, throttling, OOMKills
    metricsserver.py  PodMetrics and NodeMetrics over a window
    recommender.py  a VPA-like recommender writing VPA status
    traces.py       built-in and CSV demand traces; scenarios.py the built-in Hvpas and workloads
    observer.py, report.py, plot.py   what a run measures, its summary and tables, its picture
    runner.py       one run: API server, cluster and controller on one virtual clock

docs/simulator.md describes the model's rules and the report's fields.
"""
