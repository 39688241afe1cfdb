"""The admission webhook's serving certificate: made, kept and rotated by hvpa, or read from files.

Managed (the default), as the VPA's admission controller registers itself
with its own CA: a CA and a serving certificate it signed live in one Secret
(`--webhook-secret-name`, in hvpa's namespace) under `ca.crt` (every CA still
trusted, the current one first), `ca.key`, `tls.crt` and `tls.key`. The leader:

- makes a CA (EC P-256, `ca_days`) when the Secret holds none it can use,
  and a new one once a third of its life is left; the old CA stays in
  `ca.crt` until it expires, so certificates of either are trusted while the
  webhook configuration's CA bundle and the replicas catch up;
- issues the serving certificate (`serving_days`, renewed with a third of
  its life left: cert-manager's defaults, 90 days renewed 30 days early)
  for the webhook Service's DNS names (and the URL's host when registered by
  URL); again when those names change, or once its CA is no longer the
  current one, but never in the pass that made the new CA: the CA bundle
  (`ca_bundle`, which the leader writes into the webhook configuration) must
  hold a CA before any replica serves a certificate it signed;
- writes the Secret back (a merge patch with its resourceVersion; the
  manifests create it, since RBAC cannot narrow a create to one name).

Every replica reads the Secret every `refresh_seconds` and serves its
certificate to new connections. Until there is one it serves a self-signed
certificate no API server trusts: the calls fail, `failurePolicy: Ignore`
lets the pods through at the template's size, and they are resized in place
right after. A read that finds the Secret as the last one did (the same
resourceVersion and data) costs a comparison, nothing more: those bytes are
already served, and the leader's verdict on them holds until the CA or the
serving certificate falls due (`quiet_window`).

From files (`--webhook-cert-path`, e.g. a cert-manager Certificate's Secret
mounted there): `tls.crt` and `tls.key` are read at start and again whenever
they change; the CA bundle is then cert-manager's to inject (its cainjector),
so `ca_bundle` is None and hvpa writes none.

Validity is judged by `wall_clock` (POSIX seconds): the clock the API server
checks the certificate with, whatever clock decisions are made with.
"""

from __future__ import annotations

import base64
import datetime
import ipaddress
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import msgspec
from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from hvpa.controller.applier import Applier
from hvpa.kube.client import KubeClient
from hvpa.kube.errors import KubeError, NotFound
from hvpa.kube.resources import api_path
from hvpa.logs import fields
from hvpa.server.certificates import (
    CERT_NAME,
    KEY_NAME,
    CertificateError,
    CertificateFiles,
    load_pair,
    self_signed_pair,
    tls_context,
)

__all__ = [
    "CA_CERT",
    "CA_KEY",
    "Pair",
    "WebhookTls",
    "issue_serving",
    "make_ca",
    "quiet_window",
    "rotate",
]

_logger = logging.getLogger(__name__)

CA_CERT: Final = "ca.crt"
CA_KEY: Final = "ca.key"
# A third of a certificate's life left: renew (cert-manager: 90 days, renewBefore 30 days).
RENEW_FRACTION: Final = 1 / 3
# Certificates start a little in the past, for API servers whose clock is a little behind.
_BACKDATE: Final = datetime.timedelta(minutes=5)


@dataclass(frozen=True, slots=True)
class Pair:
    """A PEM certificate and its PEM private key."""

    certificate: bytes
    key: bytes


def _moment(seconds: float) -> datetime.datetime:
    return datetime.datetime.fromtimestamp(seconds, datetime.UTC)


def _key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def _key_pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


def make_ca(*, now: float, days: float, name: str = "hvpa-webhook-ca") -> Pair:
    """A self-signed CA that signs serving certificates only."""
    key = _key()
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"{name}@{int(now)}")])
    public = key.public_key()
    certificate = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(public)
        .serial_number(x509.random_serial_number())
        .not_valid_before(_moment(now) - _BACKDATE)
        .not_valid_after(_moment(now) + datetime.timedelta(days=days))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(public), critical=False)
        .sign(key, hashes.SHA256())
    )
    return Pair(certificate.public_bytes(serialization.Encoding.PEM), _key_pem(key))


def issue_serving(ca: Pair, names: Sequence[str], *, now: float, days: float) -> Pair:
    """A serving certificate for `names` (DNS names or IP addresses), signed by `ca`."""
    authority = x509.load_pem_x509_certificate(ca.certificate)
    signer = serialization.load_pem_private_key(ca.key, password=None)
    if not isinstance(signer, ec.EllipticCurvePrivateKey):
        raise CertificateError("the CA key is not an EC key")
    key = _key()
    alternatives: list[x509.GeneralName] = []
    for name in names:
        try:
            alternatives.append(x509.IPAddress(ipaddress.ip_address(name)))
        except ValueError:
            alternatives.append(x509.DNSName(name))
    certificate = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, names[0])]))
        .issuer_name(authority.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(_moment(now) - _BACKDATE)
        .not_valid_after(_moment(now) + datetime.timedelta(days=days))
        .add_extension(x509.SubjectAlternativeName(alternatives), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(signer.public_key()),
            critical=False,
        )
        .sign(signer, hashes.SHA256())
    )
    return Pair(certificate.public_bytes(serialization.Encoding.PEM), _key_pem(key))


def _certificates(pem: bytes) -> list[x509.Certificate]:
    try:
        return x509.load_pem_x509_certificates(pem)
    except ValueError:
        return []


def _usable_span(certificate: x509.Certificate) -> tuple[float, float]:
    """From its start until a third of its life is left: when it is not due for renewal."""
    start = certificate.not_valid_before_utc.timestamp()
    end = certificate.not_valid_after_utc.timestamp()
    return start, end - (end - start) * RENEW_FRACTION


def _due(certificate: x509.Certificate, now: float) -> bool:
    """Expired, not yet valid, or with a third of its life or less left."""
    start, renew_at = _usable_span(certificate)
    return now < start or now >= renew_at


def _signed_by(certificate: x509.Certificate, authority: x509.Certificate) -> bool:
    try:
        certificate.verify_directly_issued_by(authority)
    except (ValueError, TypeError, InvalidSignature):
        return False
    return True


def _names(certificate: x509.Certificate) -> set[str]:
    try:
        alternatives = certificate.extensions.get_extension_for_class(x509.SubjectAlternativeName)
    except x509.ExtensionNotFound:
        return set()
    dns = alternatives.value.get_values_for_type(x509.DNSName)
    ips = alternatives.value.get_values_for_type(x509.IPAddress)
    return {*dns, *(str(ip) for ip in ips)}


def _usable_ca(data: Mapping[str, bytes], now: float) -> Pair | None:
    """The current CA (the first of `ca.crt`) with its key, unless it is due or unreadable."""
    cas = _certificates(data.get(CA_CERT, b""))
    key = data.get(CA_KEY, b"")
    if not cas or not key:
        return None
    current = cas[0]
    try:
        private = serialization.load_pem_private_key(key, password=None)
    except (ValueError, TypeError):
        return None
    if private.public_key() != current.public_key() or _due(current, now):
        return None
    return Pair(current.public_bytes(serialization.Encoding.PEM), key)


def rotate(
    data: Mapping[str, bytes],
    names: Sequence[str],
    *,
    now: float,
    ca_days: float,
    serving_days: float,
) -> dict[str, bytes]:
    """The Secret's data after the leader's pass (the module docstring says what changes when)."""
    out = dict(data)
    ca = _usable_ca(data, now)
    new_ca = ca is None
    if ca is None:
        ca = make_ca(now=now, days=ca_days)
        still_valid = [
            c
            for c in _certificates(data.get(CA_CERT, b""))
            if c.not_valid_after_utc.timestamp() > now
        ]
        out[CA_CERT] = ca.certificate + b"".join(
            c.public_bytes(serialization.Encoding.PEM) for c in still_valid
        )
        out[CA_KEY] = ca.key
    serving = _certificates(data.get(CERT_NAME, b""))
    authority = x509.load_pem_x509_certificate(ca.certificate)
    trusted = _certificates(out[CA_CERT])
    leaf = serving[0] if serving and data.get(KEY_NAME) else None
    usable = (
        leaf is not None
        and not _due(leaf, now)
        and _names(leaf) == set(names)
        and any(_signed_by(leaf, c) for c in trusted)
    )
    current = leaf is not None and _signed_by(leaf, authority)
    if not usable or (not current and not new_ca):
        issued = issue_serving(ca, names, now=now, days=serving_days)
        out[CERT_NAME], out[KEY_NAME] = issued.certificate, issued.key
    return out


def quiet_window(data: Mapping[str, bytes]) -> tuple[float, float]:
    """The span of `now` in which neither the current CA nor the serving certificate is due.

    `rotate` reads the clock only to ask whether one of those two is due, so
    a Secret it left unchanged at some moment is left unchanged at every
    moment of this window: the leader need not parse and verify it again
    before the window ends. Empty (start >= end) when either is missing."""
    cas = _certificates(data.get(CA_CERT, b""))
    serving = _certificates(data.get(CERT_NAME, b""))
    if not cas or not serving:
        return 0.0, 0.0
    ca_start, ca_renew = _usable_span(cas[0])
    leaf_start, leaf_renew = _usable_span(serving[0])
    return max(ca_start, leaf_start), min(ca_renew, leaf_renew)


@dataclass(frozen=True, slots=True)
class _Seen:
    """The Secret as the last complete refresh found it, and until when the leader's verdict holds.

    `quiet` is None when no leader's pass has judged these bytes (a standby
    read them): becoming the leader then checks them once."""

    resource_version: str
    data: Mapping[str, str]
    quiet: tuple[float, float] | None

    def unchanged(self, resource_version: str, data: Mapping[str, str]) -> bool:
        return bool(resource_version) and (self.resource_version, self.data) == (
            resource_version,
            data,
        )

    def settled(self, now: float) -> bool:
        return self.quiet is not None and self.quiet[0] <= now < self.quiet[1]


class _SecretMeta(msgspec.Struct, rename="camel"):
    resource_version: str = ""


class _Secret(msgspec.Struct):
    metadata: _SecretMeta = msgspec.field(default_factory=_SecretMeta)
    data: dict[str, str] | None = None


_decode_secret: Final = msgspec.json.Decoder(_Secret).decode


class WebhookTls:
    """The webhook listener's TLS: `context` to serve with, `ca_bundle` to register."""

    def __init__(
        self,
        *,
        client: KubeClient,
        applier: Applier,
        namespace: str,
        secret_name: str,
        names: Sequence[str],
        cert_path: str | None = None,
        ca_days: float = 3 * 365.0,
        serving_days: float = 90.0,
        wall_clock: Callable[[], float] = time.time,
    ) -> None:
        self._client = client
        self._applier = applier
        self._namespace = namespace
        self._secret_name = secret_name
        self._names = tuple(names)
        self._cert_path = Path(cert_path) if cert_path is not None else None
        self._ca_days = ca_days
        self._serving_days = serving_days
        self._wall_clock = wall_clock
        self.context = tls_context()
        load_pair(self.context, *self_signed_pair())
        self.ca_bundle: bytes | None = None
        self._serving: tuple[bytes, bytes] | None = None
        self._files = (
            CertificateFiles(self.context, self._cert_path) if self._cert_path is not None else None
        )
        self._warned: set[str] = set()
        self._seen: _Seen | None = None
        # Secrets decoded and judged, for a reader (and a test) to see unchanged ones skipped.
        self.checks = 0

    @property
    def serving(self) -> bytes | None:
        """The certificate served now (PEM), None while it is the self-signed stand-in."""
        return self._serving[0] if self._serving is not None else None

    async def refresh(self, *, leading: bool) -> None:
        """Serve what the Secret (or the directory) holds now; the leader first rotates."""
        if self._cert_path is not None:
            self._refresh_files()
            return
        path = api_path(
            group="",
            version="v1",
            plural="secrets",
            namespace=self._namespace,
            name=self._secret_name,
        )
        try:
            secret = _decode_secret(await self._client.get(path))
        except NotFound:
            self._warn(
                "missing",
                "the webhook's Secret does not exist; new pods are not sized at admission",
            )
            return
        except (KubeError, msgspec.DecodeError) as error:
            self._warn("read", f"the webhook's Secret cannot be read: {error}")
            return
        raw = secret.data or {}
        version = secret.metadata.resource_version
        seen = self._seen
        if (
            seen is not None
            and seen.unchanged(version, raw)
            and (not leading or seen.settled(self._wall_clock()))
        ):
            self._warned.clear()
            return
        self.checks += 1
        self._seen = None
        data = _decoded(raw)
        quiet: tuple[float, float] | None = None
        if leading:
            rotated = rotate(
                data,
                self._names,
                now=self._wall_clock(),
                ca_days=self._ca_days,
                serving_days=self._serving_days,
            )
            if rotated != data:
                if not await self._write(version, rotated):
                    return
                data = rotated
            else:
                quiet = quiet_window(data)
        self._serve(data.get(CERT_NAME), data.get(KEY_NAME))
        bundle = data.get(CA_CERT)
        self.ca_bundle = bundle if bundle else None
        self._warned.clear()
        if not leading or quiet is not None:
            # After a write the next read brings a new resourceVersion: nothing to remember yet.
            self._seen = _Seen(version, dict(raw), quiet)

    async def _write(self, resource_version: str, data: Mapping[str, bytes]) -> bool:
        """Write the rotated Secret; False (and a warning) when it cannot be written."""
        try:
            await self._applier.write_secret(
                namespace=self._namespace,
                name=self._secret_name,
                resource_version=resource_version,
                data={k: base64.b64encode(v).decode() for k, v in data.items()},
            )
        except KubeError as error:
            self._warn("write", f"the webhook's Secret cannot be written: {error}")
            return False
        _logger.info("webhook certificate written", extra=fields(secret=self._secret_name))
        return True

    def _serve(self, certificate: bytes | None, key: bytes | None) -> None:
        if not certificate or not key or self._serving == (certificate, key):
            return
        try:
            load_pair(self.context, certificate, key)
        except CertificateError as error:
            self._warn("load", f"the webhook's certificate cannot be served: {error}")
            return
        self._serving = (certificate, key)
        _logger.info("serving the webhook certificate", extra=fields(names=",".join(self._names)))

    def _refresh_files(self) -> None:
        assert self._files is not None
        try:
            if self._files.refresh():
                # `serving` shows the certificate; the key stays with `ssl`, read once.
                self._serving = (self._files.certificate.read_bytes(), b"")
                _logger.info(
                    "serving the webhook certificate", extra=fields(names=",".join(self._names))
                )
        except (CertificateError, OSError) as error:
            self._warn("files", f"the webhook's certificate files cannot be served: {error}")

    def _warn(self, what: str, message: str) -> None:
        """Once per kind of trouble, until it clears (then it is logged again if it returns)."""
        if what in self._warned:
            return
        self._warned.add(what)
        _logger.warning(message, extra=fields(secret=self._secret_name))


def _decoded(data: Mapping[str, Any]) -> dict[str, bytes]:
    out = {}
    for key, value in data.items():
        try:
            out[str(key)] = base64.b64decode(str(value), validate=True)
        except ValueError:
            continue
    return out
