"""The metrics listener's certificate: self-signed for localhost and 127.0.0.1 when no
directory gives one, the directory's tls.crt and tls.key when it holds both, and a clear
CertificateError (never a silent fallback) for half a pair or a pair that does not load."""

from __future__ import annotations

import ipaddress
import ssl
from pathlib import Path

import pytest
from cryptography import x509

from hvpa.server.certificates import CertificateError, self_signed_pair, server_context


def test_self_signed_names_localhost_and_loopback() -> None:
    certificate_pem, key_pem = self_signed_pair()
    certificate = x509.load_pem_x509_certificate(certificate_pem)
    names = certificate.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert names.get_values_for_type(x509.DNSName) == ["localhost"]
    assert names.get_values_for_type(x509.IPAddress) == [ipaddress.ip_address("127.0.0.1")]
    assert certificate.issuer == certificate.subject
    assert b"PRIVATE KEY" in key_pem


def test_without_a_directory_a_self_signed_context() -> None:
    context = server_context(None)
    assert isinstance(context, ssl.SSLContext)
    assert context.minimum_version == ssl.TLSVersion.TLSv1_2


def write_pair(directory: Path) -> bytes:
    certificate_pem, key_pem = self_signed_pair()
    (directory / "tls.crt").write_bytes(certificate_pem)
    (directory / "tls.key").write_bytes(key_pem)
    return certificate_pem


def test_a_directory_with_the_pair_is_used(tmp_path: Path) -> None:
    write_pair(tmp_path)
    assert isinstance(server_context(str(tmp_path)), ssl.SSLContext)


def test_half_a_pair_is_an_error(tmp_path: Path) -> None:
    write_pair(tmp_path)
    (tmp_path / "tls.key").unlink()
    with pytest.raises(CertificateError, match=r"tls\.key is missing"):
        server_context(str(tmp_path))


def test_a_mismatched_pair_is_an_error(tmp_path: Path) -> None:
    write_pair(tmp_path)
    _, other_key = self_signed_pair()
    (tmp_path / "tls.key").write_bytes(other_key)
    with pytest.raises(CertificateError, match="cannot load"):
        server_context(str(tmp_path))


def test_an_empty_directory_falls_back_to_self_signed(tmp_path: Path) -> None:
    """As controller-runtime: a directory without the files means a self-signed certificate."""
    assert isinstance(server_context(str(tmp_path)), ssl.SSLContext)
