"""The metrics listener's certificate: self-signed for localhost and 127.0.0.1 when no
directory gives one, the directory's tls.crt and tls.key when it holds both, and a clear
CertificateError (never a silent fallback) for half a pair or a pair that does not load;
a pair renewed in the directory is served to new connections, a broken renewal is not."""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import os
import ssl
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import serialization

from hvpa.server.certificates import (
    CertificateError,
    certificate_files,
    self_signed_pair,
    server_context,
)
from hvpa.server.listeners import reload_on_change
from hvpa.settings import ServerSettings


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


async def served_certificate(context: ssl.SSLContext) -> bytes:
    """The DER certificate a TLS client is shown by a server speaking with `context`."""

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.close()

    server = await asyncio.start_server(answer, "127.0.0.1", 0, ssl=context)
    port = server.sockets[0].getsockname()[1]
    client = ssl.create_default_context()
    client.check_hostname = False
    client.verify_mode = ssl.CERT_NONE
    try:
        _, writer = await asyncio.open_connection("127.0.0.1", port, ssl=client)
        ssl_object = writer.get_extra_info("ssl_object")
        der = ssl_object.getpeercert(binary_form=True)
        writer.close()
        return bytes(der)
    finally:
        server.close()
        await server.wait_closed()


def der(pem: bytes) -> bytes:
    return x509.load_pem_x509_certificate(pem).public_bytes(serialization.Encoding.DER)


async def test_a_renewed_pair_is_served_to_new_connections(tmp_path: Path) -> None:
    """cert-manager renews the Secret in place; the next handshake gets the new certificate."""
    first = write_pair(tmp_path)
    files = certificate_files(str(tmp_path))
    assert files is not None
    assert await served_certificate(files.context) == der(first)
    assert files.refresh() is False, "unchanged files are not loaded again"
    second = write_pair(tmp_path)
    os.utime(tmp_path / "tls.crt", (1, 1))  # a different mtime, whatever the clock's grain
    assert files.refresh() is True
    assert await served_certificate(files.context) == der(second)


async def test_a_broken_renewal_keeps_the_pair_before(tmp_path: Path) -> None:
    first = write_pair(tmp_path)
    files = certificate_files(str(tmp_path))
    assert files is not None
    _, other_key = self_signed_pair()
    (tmp_path / "tls.key").write_bytes(other_key)
    with pytest.raises(CertificateError, match="cannot load"):
        files.refresh()
    assert await served_certificate(files.context) == der(first)


async def test_the_listener_reloads_on_its_own(tmp_path: Path) -> None:
    """The metrics listener's task polls the directory every certificate_refresh_seconds."""
    write_pair(tmp_path)
    files = certificate_files(str(tmp_path))
    assert files is not None
    settings = ServerSettings(certificate_refresh_seconds=0.01)
    task = asyncio.create_task(reload_on_change(files, settings))
    try:
        second = write_pair(tmp_path)
        os.utime(tmp_path / "tls.crt", (2, 2))
        for _ in range(500):
            if await served_certificate(files.context) == der(second):
                break
            await asyncio.sleep(0.01)
        assert await served_certificate(files.context) == der(second)
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
