"""The HTTP side channels of `hvpa run`: health probes, Prometheus metrics and `/debug/state`.

- `listeners`    the two listeners and what each serves (`Server`)
- `access`       who may read the metrics listener: TokenReview and SubjectAccessReview
- `certificates` the metrics listener's TLS certificate, from a directory or self-signed
- `debug_state`  /debug/state encoded within its byte limits
"""

from hvpa.server.listeners import Server, parse_address

__all__ = ["Server", "parse_address"]
