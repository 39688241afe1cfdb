"""Everything that talks to the API server: client, reflector, store, work queue, leader election.

Modules, from the bottom up (import from them directly):

- `settings`   every timeout, backoff and limit, in small dataclasses
- `metrics`    every Prometheus metric of this layer, on one registry
- `errors`     API errors by meaning (NotFound, Conflict, Expired...), parsed from Status
- `client`     KubeClient over aiohttp, configured from a kubeconfig or in-cluster
- `wire`       list and watch-event envelopes, generic over the record wire structs
- `resources`  where each resource lives and how its objects become records
- `backoff`    client-go's backoff manager and work-queue rate limiters
- `store`      records keyed by namespace/name, with named indexes and `select`
- `reflector`  paginated list, then watch with bookmarks, re-list on 410
- `informer`   reflector + store + event handlers
- `queue`      the coalescing, rate-limited work queue
- `leader`     leader election on a coordination.k8s.io/v1 Lease
"""
