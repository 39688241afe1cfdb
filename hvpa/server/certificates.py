"""The metrics listener's TLS: a certificate from a directory, or a self-signed one made at start.

As controller-runtime's secure metrics serving does it: when the directory
(`--metrics-cert-path`) holds `tls.crt` and `tls.key` (the names of a
kubernetes.io/tls Secret's keys, as cert-manager writes them) they are
served; otherwise a self-signed certificate for `localhost` and 127.0.0.1 is
made at start. A self-signed certificate still encrypts the scrape, which is
what matters for a bearer token on the wire; Prometheus then skips
verification (`insecureSkipVerify`), or verifies a certificate from the
directory against its CA (`serverName` and `ca` in the ServiceMonitor).

The key never touches a persistent disk: the generated pair is written to a
private temporary directory only long enough for `ssl` to load it (the
standard library loads key pairs from files only), then removed. An EC P-256
key is used: quick to make at every start, and accepted by every TLS client.

What can go wrong: a directory that holds only one of the two files, or an
unreadable or mismatched pair, is a `CertificateError` naming the file; it
stops the start-up (`hvpa run` exits 1), never falls back to a self-signed
certificate silently.

A pair from a directory is read again whenever its files change
(`CertificateFiles`, polled by the listener as controller-runtime's
certwatcher polls): cert-manager renews a Certificate's Secret in place and
the kubelet updates the mounted files, so hvpa serves the new pair without a
restart. A pair that fails to load then is logged and the previous one is
kept.
"""

from __future__ import annotations

import datetime
import ipaddress
import ssl
import tempfile
from pathlib import Path
from typing import Final

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

__all__ = [
    "CERT_NAME",
    "KEY_NAME",
    "CertificateError",
    "CertificateFiles",
    "certificate_files",
    "load_pair",
    "self_signed_pair",
    "server_context",
    "tls_context",
]

# controller-runtime's CertName and KeyName defaults.
CERT_NAME: Final = "tls.crt"
KEY_NAME: Final = "tls.key"
# client-go's GenerateSelfSignedCertKey names the host and 127.0.0.1; a year is ample for a
# certificate that is made anew at every start.
SELF_SIGNED_HOST: Final = "localhost"
SELF_SIGNED_DAYS: Final = 365


class CertificateError(Exception):
    """The serving certificate cannot be loaded."""


class CertificateFiles:
    """`tls.crt` and `tls.key` in a directory, served from `context` and reloaded on change.

    A change is a different modification time or size of either file (the
    kubelet replaces a mounted Secret's files through a symlink swap, which
    changes both). `refresh` raises `CertificateError` when the new pair
    cannot be loaded; the context keeps serving the pair it had.
    """

    def __init__(self, context: ssl.SSLContext, directory: Path) -> None:
        self.context = context
        self.certificate = directory / CERT_NAME
        self.key = directory / KEY_NAME
        self._seen: tuple[tuple[float, int], ...] | None = None

    def refresh(self) -> bool:
        """Load the pair if it changed since the last load; True when it was (re)loaded."""
        try:
            stats = [path.stat() for path in self.files]
        except OSError as error:
            raise CertificateError(f"cannot read {self.certificate.parent}: {error}") from error
        seen = tuple((stat.st_mtime, stat.st_size) for stat in stats)
        if seen == self._seen:
            return False
        _load(self.context, self.certificate, self.key)
        self._seen = seen
        return True

    @property
    def files(self) -> tuple[Path, Path]:
        return self.certificate, self.key


def self_signed_pair(*, now: datetime.datetime | None = None) -> tuple[bytes, bytes]:
    """A PEM certificate and its PEM private key, self-signed for localhost and 127.0.0.1."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"hvpa@{SELF_SIGNED_HOST}")])
    start = now or datetime.datetime.now(datetime.UTC)
    names = x509.SubjectAlternativeName(
        [x509.DNSName(SELF_SIGNED_HOST), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
    )
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(start - datetime.timedelta(minutes=5))
        .not_valid_after(start + datetime.timedelta(days=SELF_SIGNED_DAYS))
        .add_extension(names, critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False
        )
        .sign(key, hashes.SHA256())
    )
    key_pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    return certificate.public_bytes(serialization.Encoding.PEM), key_pem


def tls_context() -> ssl.SSLContext:
    """A server context with the standard library's secure defaults (TLS 1.2 or newer)."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    return context


def _load(context: ssl.SSLContext, certificate: Path, key: Path) -> None:
    try:
        context.load_cert_chain(certificate, key)
    except (OSError, ssl.SSLError) as error:
        raise CertificateError(f"cannot load {certificate} with {key}: {error}") from error


def server_context(cert_path: str | None) -> ssl.SSLContext:
    """The TLS context of the metrics listener (see the module docstring for the rules)."""
    files = certificate_files(cert_path)
    if files is not None:
        return files.context
    context = tls_context()
    load_pair(context, *self_signed_pair())
    return context


def certificate_files(cert_path: str | None) -> CertificateFiles | None:
    """The directory's pair, loaded; None when there is no directory or it holds neither file."""
    if cert_path is None:
        return None
    files = CertificateFiles(tls_context(), Path(cert_path))
    present = [path.exists() for path in files.files]
    if not any(present):
        return None
    if not all(present):
        missing = files.key if present[0] else files.certificate
        raise CertificateError(f"{missing} is missing beside the other half of the pair")
    files.refresh()
    return files


def load_pair(context: ssl.SSLContext, certificate_pem: bytes, key_pem: bytes) -> None:
    """Serve a PEM pair from `context` (new handshakes get it; it may replace an earlier one).

    Through a private temporary directory, removed at once: `ssl` loads key
    pairs from files only, and the key must not stay on a disk."""
    with tempfile.TemporaryDirectory(prefix="hvpa-serving-") as scratch:
        certificate, key = Path(scratch) / CERT_NAME, Path(scratch) / KEY_NAME
        certificate.write_bytes(certificate_pem)
        key.touch(mode=0o600)
        key.write_bytes(key_pem)
        _load(context, certificate, key)
