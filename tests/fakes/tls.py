"""A private CA and a certificate it signs for 127.0.0.1, made afresh for each test.

The bot's TLS clients verify as they would in production (the system's CAs,
or the one ``SSL_CERT_FILE`` names): a test trusts this CA by pointing
``SSL_CERT_FILE`` at ``ca``, and sees an untrusted server by not doing so.
"""

from __future__ import annotations

import datetime
import ipaddress
import ssl
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

_LOOPBACK = ipaddress.ip_address("127.0.0.1")


@dataclass(frozen=True)
class ServerCertificates:
    """PEM files: the CA's certificate, the server's certificate and its key."""

    ca: Path
    certificate: Path
    key: Path

    def server_context(self) -> ssl.SSLContext:
        """What a TLS server on 127.0.0.1 presents."""
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(self.certificate, self.key)
        return context


def make_certificates(folder: Path) -> ServerCertificates:
    """A CA valid for a day, and a certificate it signs for the IP address 127.0.0.1."""
    folder.mkdir(parents=True, exist_ok=True)
    now = datetime.datetime.now(datetime.UTC)
    valid = (now - datetime.timedelta(minutes=5), now + datetime.timedelta(days=1))
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "bridge tests CA")])
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(valid[0])
        .not_valid_after(valid[1])
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    server = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")]))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(valid[0])
        .not_valid_after(valid[1])
        .add_extension(x509.SubjectAlternativeName([x509.IPAddress(_LOOPBACK)]), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    found = ServerCertificates(folder / "ca.pem", folder / "server.pem", folder / "server-key.pem")
    found.ca.write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    found.certificate.write_bytes(server.public_bytes(serialization.Encoding.PEM))
    found.key.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return found
