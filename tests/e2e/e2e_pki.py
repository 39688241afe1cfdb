"""The control plane's certificates and keys, made with the openssl command line.

A real cluster's trust is several separate roots, and the suite keeps them apart as kubeadm
does, so that a wrong CA is an error here as it would be there:

- the cluster CA signs the API server's serving certificate, every client certificate
  (admin, kube-controller-manager, kube-scheduler, kwok) and the serving certificate of the
  suite's metrics APIService (which the aggregator checks against the APIService's caBundle);
- the front-proxy CA signs only the client certificate the aggregator presents to an
  APIService, whose requests the APIService trusts for the user they carry;
- the etcd CA signs etcd's serving certificate and the client certificate the API server (and
  the suite, to compact) present to etcd;
- the ServiceAccount key pair signs and verifies ServiceAccount tokens.

EC P-256 keys: quick to make (the whole set takes well under a second) and accepted by every
component. Certificates are valid for two days; a session runs for minutes.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Certificate", "Pki", "make_pki"]

_DAYS = "2"
# A config of our own: the system openssl.cnf would add CA extensions to every `req -x509`.
_OPENSSL_CONFIG = "[req]\ndistinguished_name = dn\nprompt = no\n[dn]\n"


@dataclass(frozen=True)
class Certificate:
    """A certificate and its private key, both PEM files."""

    cert: Path
    key: Path


@dataclass(frozen=True)
class Pki:
    directory: Path
    ca: Certificate
    front_proxy_ca: Certificate
    etcd_ca: Certificate
    etcd_server: Certificate
    etcd_client: Certificate
    apiserver: Certificate
    admin: Certificate
    controller_manager: Certificate
    scheduler: Certificate
    front_proxy_client: Certificate
    metrics_apiservice: Certificate
    service_account_key: Path
    service_account_public_key: Path


def _openssl(arguments: list[str], config: Path) -> None:
    result = subprocess.run(
        ["openssl", *arguments],
        env={"OPENSSL_CONF": str(config), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode != 0:
        raise RuntimeError(f"openssl {arguments[0]} failed: {result.stderr.strip()}")


def _new_key_arguments(key: Path) -> list[str]:
    return [
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
        "-keyout",
        str(key),
    ]


def _ca(directory: Path, name: str, config: Path) -> Certificate:
    made = Certificate(directory / f"{name}.crt", directory / f"{name}.key")
    _openssl(
        [
            "req",
            "-x509",
            *_new_key_arguments(made.key),
            "-out",
            str(made.cert),
            "-days",
            _DAYS,
            "-subj",
            f"/CN={name}",
            "-config",
            str(config),
            "-addext",
            "basicConstraints=critical,CA:TRUE",
            "-addext",
            "keyUsage=critical,keyCertSign,cRLSign,digitalSignature",
        ],
        config,
    )
    return made


def _issue(
    directory: Path,
    name: str,
    *,
    ca: Certificate,
    subject: str,
    usage: str,
    config: Path,
    alt_names: tuple[str, ...] = (),
) -> Certificate:
    """A leaf certificate signed by `ca`; `usage` is serverAuth, clientAuth or both."""
    made = Certificate(directory / f"{name}.crt", directory / f"{name}.key")
    extensions = [
        "basicConstraints=critical,CA:FALSE",
        "keyUsage=critical,digitalSignature,keyEncipherment",
        f"extendedKeyUsage={usage}",
    ]
    if alt_names:
        extensions.append("subjectAltName=" + ",".join(alt_names))
    _openssl(
        [
            "req",
            "-x509",
            *_new_key_arguments(made.key),
            "-out",
            str(made.cert),
            "-days",
            _DAYS,
            "-subj",
            subject,
            "-config",
            str(config),
            "-CA",
            str(ca.cert),
            "-CAkey",
            str(ca.key),
            *(argument for extension in extensions for argument in ("-addext", extension)),
        ],
        config,
    )
    return made


def make_pki(directory: Path, *, metrics_service_host: str) -> Pki:
    """Every certificate and key the control plane and the suite's clients need.

    `metrics_service_host` is the DNS name the aggregator expects on the metrics APIService's
    certificate: `<service>.<namespace>.svc`, the Service the APIService names.
    """
    directory.mkdir(parents=True, exist_ok=True)
    config = directory / "openssl.cnf"
    config.write_text(_OPENSSL_CONFIG)
    ca = _ca(directory, "cluster-ca", config)
    front_proxy_ca = _ca(directory, "front-proxy-ca", config)
    etcd_ca = _ca(directory, "etcd-ca", config)

    def client(name: str, subject: str, signer: Certificate = ca) -> Certificate:
        return _issue(
            directory, name, ca=signer, subject=subject, usage="clientAuth", config=config
        )

    apiserver = _issue(
        directory,
        "apiserver",
        ca=ca,
        subject="/CN=kube-apiserver",
        usage="serverAuth",
        config=config,
        alt_names=(
            "IP:127.0.0.1",
            "DNS:localhost",
            "DNS:kubernetes",
            "DNS:kubernetes.default",
            "DNS:kubernetes.default.svc",
        ),
    )
    metrics_apiservice = _issue(
        directory,
        "metrics-apiservice",
        ca=ca,
        subject=f"/CN={metrics_service_host}",
        usage="serverAuth",
        config=config,
        alt_names=(f"DNS:{metrics_service_host}", "DNS:localhost", "IP:127.0.0.1"),
    )
    service_account_key = directory / "service-account.key"
    service_account_public_key = directory / "service-account.pub"
    _openssl(
        [
            "genpkey",
            "-algorithm",
            "EC",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-out",
            str(service_account_key),
        ],
        config,
    )
    _openssl(
        [
            "pkey",
            "-in",
            str(service_account_key),
            "-pubout",
            "-out",
            str(service_account_public_key),
        ],
        config,
    )
    # etcd's gRPC gateway dials etcd itself with the serving certificate: clientAuth too.
    etcd_server = _issue(
        directory,
        "etcd-server",
        ca=etcd_ca,
        subject="/CN=etcd",
        usage="serverAuth,clientAuth",
        config=config,
        alt_names=("IP:127.0.0.1", "DNS:localhost"),
    )
    return Pki(
        directory=directory,
        ca=ca,
        front_proxy_ca=front_proxy_ca,
        etcd_ca=etcd_ca,
        etcd_server=etcd_server,
        etcd_client=client("etcd-client", "/CN=kube-apiserver-etcd-client", etcd_ca),
        apiserver=apiserver,
        admin=client("admin", "/O=system:masters/CN=e2e-admin"),
        controller_manager=client("controller-manager", "/CN=system:kube-controller-manager"),
        scheduler=client("scheduler", "/CN=system:kube-scheduler"),
        front_proxy_client=client("front-proxy-client", "/CN=front-proxy-client", front_proxy_ca),
        metrics_apiservice=metrics_apiservice,
        service_account_key=service_account_key,
        service_account_public_key=service_account_public_key,
    )
