"""The controller: informers -> handlers -> work queue -> reconciler -> engine -> applier.

Modules, from the bottom up (import from them directly):

- `resources`      the Hvpa, HPA and VPA-with-ownership resources and their records
- `cache`          the informers' stores, indexes and every lookup the controller makes
- `handlers`       events mapped to Hvpa keys, nothing else
- `configmaps`     one small informer per ConfigMap a configMapRef names
- `snapshot`       the one place a Snapshot is built (cache + metric readings)
- `metricsapi`     reads of metrics.k8s.io, custom and external metrics, failures as readings
- `vpa`            the child VPA's desired shape
- `events`         client-go's event correlator: dedup, aggregation, spam filter
- `status`         the status the controller writes on top of the engine's (dry run, invalid spec)
- `applier`        the one place that writes to the API server
- `observability`  controller-runtime metrics, hvpa_* series, the /debug/state entries
- `reconciler`     one reconcile of one Hvpa
- `manager`        wiring and lifecycle: informers, leader election, workers, resync
- `turns`          how many reconciles one turn of the event loop begins
- `explain`        `hvpa explain`: one decision from plain GETs and LISTs, nothing written
- `collector`      the garbage collector's thresholds for the controller's own process
"""
