"""Python Tink StreamingAead (AES-GCM-HKDF) from a raw key, shared by the tink tests.

Needs the `tink` package (pip install tink; written against tink-python 1.16.1).
"""

import io

import tink
from tink import secret_key_access, streaming_aead
from tink.proto import aes_gcm_hkdf_streaming_pb2, common_pb2, tink_pb2

streaming_aead.register()

TYPE_URL = "type.googleapis.com/google.crypto.tink.AesGcmHkdfStreamingKey"
HASHES = {"SHA1": common_pb2.SHA1, "SHA256": common_pb2.SHA256, "SHA512": common_pb2.SHA512}


def tink_streaming_aead(key, segment_size, hkdf_hash="SHA256", derived_key_size=None):
    """Tink's AES-GCM-HKDF StreamingAead primitive for the raw key bytes `key`.

    paes uses hkdf_hash SHA256 and derived_key_size == len(key) (the defaults here).
    """
    proto_key = aes_gcm_hkdf_streaming_pb2.AesGcmHkdfStreamingKey(
        version=0,
        key_value=key,
        params=aes_gcm_hkdf_streaming_pb2.AesGcmHkdfStreamingParams(
            ciphertext_segment_size=segment_size,
            derived_key_size=derived_key_size or len(key),
            hkdf_hash_type=HASHES[hkdf_hash]))
    keyset = tink_pb2.Keyset(primary_key_id=1, key=[tink_pb2.Keyset.Key(
        key_data=tink_pb2.KeyData(type_url=TYPE_URL, value=proto_key.SerializeToString(),
                                  key_material_type=tink_pb2.KeyData.SYMMETRIC),
        status=tink_pb2.ENABLED, key_id=1, output_prefix_type=tink_pb2.RAW)])
    handle = tink.proto_keyset_format.parse(keyset.SerializeToString(), secret_key_access.TOKEN)
    return handle.primitive(streaming_aead.StreamingAead)


class _KeptBytesIO(io.BytesIO):
    """A BytesIO that survives close(): Tink's encrypting stream closes its destination."""

    def close(self):
        pass


def tink_encrypt(saead, plaintext, associated_data=b""):
    out = _KeptBytesIO()
    with saead.new_encrypting_stream(out, associated_data) as stream:
        stream.write(plaintext)
    return out.getvalue()


def tink_decrypt(saead, ciphertext, associated_data=b""):
    """The plaintext; raises tink.TinkError when the ciphertext does not authenticate."""
    with saead.new_decrypting_stream(io.BytesIO(ciphertext), associated_data) as stream:
        return stream.read()
