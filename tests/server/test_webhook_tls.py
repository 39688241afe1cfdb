"""The webhook's CA and serving certificate through the leader's passes (`rotate`), by the wall clock.

Lifetimes here are the defaults (CA 3 years, serving 90 days, each renewed
with a third of its life left), so the days below are: a serving certificate
is renewed from day 60, a CA from day 730.
"""

from __future__ import annotations

import ssl

from cryptography import x509

from hvpa.server.certificates import CERT_NAME, KEY_NAME
from hvpa.server.webhook_tls import CA_CERT, CA_KEY, rotate

DAY = 86_400.0
START = 1_800_000_000.0
NAMES = ("hvpa-webhook", "hvpa-webhook.hvpa-system", "hvpa-webhook.hvpa-system.svc")


def cas(data: dict[str, bytes]) -> list[x509.Certificate]:
    return x509.load_pem_x509_certificates(data[CA_CERT])


def leaf(data: dict[str, bytes]) -> x509.Certificate:
    return x509.load_pem_x509_certificate(data[CERT_NAME])


def passes(
    data: dict[str, bytes], *, day: float, names: tuple[str, ...] = NAMES
) -> dict[str, bytes]:
    return rotate(data, names, now=START + day * DAY, ca_days=3 * 365, serving_days=90)


def verifies(data: dict[str, bytes]) -> None:
    """The leaf chains to the bundle, for the first name: what an API server checks."""
    issued = leaf(data)
    assert any(issued.issuer == ca.subject for ca in cas(data))
    context = ssl.create_default_context(cadata=data[CA_CERT].decode())
    assert context.get_ca_certs()


def test_the_first_pass_makes_a_ca_and_a_certificate_for_the_names() -> None:
    data = passes({}, day=0)
    assert set(data) == {CA_CERT, CA_KEY, CERT_NAME, KEY_NAME}
    assert len(cas(data)) == 1
    names = leaf(data).extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert set(names.get_values_for_type(x509.DNSName)) == set(NAMES)
    assert leaf(data).issuer == cas(data)[0].subject
    verifies(data)
    assert passes(data, day=1) == data  # nothing is due: nothing is rewritten


def test_the_serving_certificate_is_renewed_with_a_third_of_its_life_left() -> None:
    data = passes({}, day=0)
    assert passes(data, day=59) == data
    renewed = passes(data, day=60)
    assert renewed[CERT_NAME] != data[CERT_NAME]
    assert renewed[CA_CERT] == data[CA_CERT]
    verifies(renewed)


def test_new_names_get_a_new_certificate() -> None:
    data = passes({}, day=0)
    moved = passes(data, day=1, names=("127.0.0.1",))
    addresses = leaf(moved).extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert [str(a) for a in addresses.get_values_for_type(x509.IPAddress)] == ["127.0.0.1"]


def test_a_new_ca_is_trusted_before_anything_it_signs_is_served() -> None:
    data = passes({}, day=0)
    # Keep the serving certificate fresh until the CA is due, as the leader's passes would.
    for day in range(60, 730, 60):
        data = passes(data, day=day)
    old_ca = cas(data)[0]
    served = leaf(data)
    rotated = passes(data, day=730)
    new_cas = cas(rotated)
    assert len(new_cas) == 2 and new_cas[1] == old_ca and new_cas[0] != old_ca
    # Same pass: the certificate the replicas serve is still the old CA's.
    assert leaf(rotated) == served and served.issuer == old_ca.subject
    # Next pass (the configuration now holds both CAs): a certificate of the new one.
    after = passes(rotated, day=730.01)
    assert leaf(after).issuer == new_cas[0].subject
    assert cas(after) == new_cas
    # Once the old CA has expired, it leaves the bundle at the next CA rotation.
    later = passes(after, day=3 * 365 + 731)
    assert old_ca not in cas(later)


def test_an_unusable_secret_is_started_afresh() -> None:
    data = passes({}, day=0)
    broken = {**data, CA_KEY: b"not a key"}
    fresh = passes(broken, day=1)
    assert cas(fresh)[0] != cas(data)[0]
    # The old certificate is still trusted (its CA stays in the bundle) for one more pass.
    assert leaf(fresh) == leaf(data)
    again = passes(fresh, day=1.01)
    assert leaf(again).issuer == cas(again)[0].subject
    verifies(again)
    # Nothing usable at all: a CA and a certificate of it at once.
    empty = passes({CA_CERT: b"junk", CERT_NAME: b"junk"}, day=1)
    assert leaf(empty).issuer == cas(empty)[0].subject
