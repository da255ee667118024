// The floor of a small sealed job with OpenSSL loaded as paes loads it
// (bench/start_up_and_armor.sh): the cryptography of sealing a file to an age
// X25519 recipient, or of opening it with the identity, and its output written
// as paes writes one (a temporary, fsync, rename, the directory's fsync), with
// nothing else: no command line parser, no threads runtime, no C++ runtime, no
// format beyond the bytes themselves. What paes takes above this is its own;
// what this takes against age is the price of OpenSSL 3's start-up (the
// dynamic loader binding libcrypto, its providers' method stores built at the
// first fetch of each kind). It is a measuring stick, not a format: its
// files open only with itself, and a failure aborts.
//
//   start_up_floor seal age1RECIPIENT IN OUT
//   start_up_floor open IDENTITY_FILE IN OUT      (IN: a file this program sealed)
#define _POSIX_C_SOURCE 200809L
#include <fcntl.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/rand.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

enum { kKey = 32, kFileKey = 16, kNonce = 16, kTag = 16, kMaxText = 1 << 16 };

static void need(int ok, const char* what) {
  if (!ok) {
    fprintf(stderr, "start_up_floor: %s failed\n", what);
    abort();
  }
}

// The 32 bytes of a bech32 string's data part (age1... or AGE-SECRET-KEY-1...).
static void bech32_key(const char* text, unsigned char out[kKey]) {
  static const char kCharset[] = "qpzry9x8gf2tvdw0s3jn54khce6mua7l";
  const char* data = strrchr(text, '1');
  need(data != NULL, "bech32");
  ++data;
  size_t len = strcspn(data, "\r\n");
  need(len > 6, "bech32");
  len -= 6;  // the checksum
  unsigned acc = 0;
  int bits = 0;
  int n = 0;
  for (size_t i = 0; i < len; ++i) {
    const char* at = strchr(kCharset, data[i] >= 'A' && data[i] <= 'Z' ? data[i] - 'A' + 'a' : data[i]);
    need(at != NULL && data[i] != '\0', "bech32");
    acc = (acc << 5) | (unsigned)(at - kCharset);
    bits += 5;
    if (bits >= 8) {
      bits -= 8;
      need(n < kKey, "bech32");
      out[n++] = (unsigned char)(acc >> bits);
    }
  }
  need(n == kKey, "bech32");
}

static void hkdf(const unsigned char* ikm, size_t ikm_len, const unsigned char* salt, size_t salt_len,
                 const char* info, unsigned char* out, size_t out_len) {
  EVP_KDF* kdf = EVP_KDF_fetch(NULL, "HKDF", NULL);
  EVP_KDF_CTX* ctx = EVP_KDF_CTX_new(kdf);
  // No salt: HKDF's default, HashLen zero bytes.
  OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, "SHA256", 0),
                         OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY, (void*)ikm, ikm_len),
                         OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO, (void*)info, strlen(info)),
                         OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SALT, (void*)salt, salt_len),
                         OSSL_PARAM_construct_end()};
  if (salt_len == 0) params[3] = OSSL_PARAM_construct_end();
  need(ctx != NULL && EVP_KDF_derive(ctx, out, out_len, params) == 1, "HKDF");
  EVP_KDF_CTX_free(ctx);
  EVP_KDF_free(kdf);
}

static void hmac(const unsigned char* key, const unsigned char* data, size_t len, unsigned char out[kKey]) {
  EVP_MAC* mac = EVP_MAC_fetch(NULL, "HMAC", NULL);
  EVP_MAC_CTX* ctx = EVP_MAC_CTX_new(mac);
  OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, "SHA256", 0),
                         OSSL_PARAM_construct_end()};
  size_t out_len = 0;
  need(ctx != NULL && EVP_MAC_init(ctx, key, kKey, params) == 1 && EVP_MAC_update(ctx, data, len) == 1 &&
           EVP_MAC_final(ctx, out, &out_len, kKey) == 1,
       "HMAC");
  EVP_MAC_CTX_free(ctx);
  EVP_MAC_free(mac);
}

// An AEAD (ChaCha20-Poly1305 or AES-256-GCM) with a zero nonce over `len`
// bytes; the tag follows the text. Opening checks it.
static void aead(const char* name, int seal, const unsigned char* key, const unsigned char* in, int len,
                 unsigned char* out) {
  static const unsigned char kZeroNonce[12];
  EVP_CIPHER* cipher = EVP_CIPHER_fetch(NULL, name, NULL);
  EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
  int n = 0;
  int last = 0;
  need(ctx != NULL && EVP_CipherInit_ex2(ctx, cipher, key, kZeroNonce, seal, NULL) == 1, name);
  if (!seal) need(EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_TAG, kTag, (void*)(in + len)) == 1, name);
  need(EVP_CipherUpdate(ctx, out, &n, in, len) == 1 && EVP_CipherFinal_ex(ctx, out + n, &last) == 1, name);
  if (seal) need(EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, kTag, out + len) == 1, name);
  EVP_CIPHER_CTX_free(ctx);
  EVP_CIPHER_free(cipher);
}

static void x25519(EVP_PKEY* own, const unsigned char peer[kKey], unsigned char shared[kKey]) {
  EVP_PKEY* peer_key = EVP_PKEY_new_raw_public_key(EVP_PKEY_X25519, NULL, peer, kKey);
  EVP_PKEY_CTX* ctx = EVP_PKEY_CTX_new(own, NULL);
  size_t len = kKey;
  need(peer_key != NULL && ctx != NULL && EVP_PKEY_derive_init(ctx) == 1 && EVP_PKEY_derive_set_peer(ctx, peer_key) == 1 &&
           EVP_PKEY_derive(ctx, shared, &len) == 1,
       "X25519");
  EVP_PKEY_CTX_free(ctx);
  EVP_PKEY_free(peer_key);
}

// The file: the ephemeral share, the wrapped file key and its tag, the nonce,
// the header's MAC, then the text and its tag.
struct Header {
  unsigned char share[kKey];
  unsigned char wrapped[kFileKey + kTag];
  unsigned char nonce[kNonce];
  unsigned char mac[kKey];
};

// The keys every file derives from its file key: the header's MAC key and the payload key.
static void file_keys(const unsigned char file_key[kFileKey], struct Header* header, unsigned char payload_key[kKey]) {
  unsigned char mac_key[kKey];
  hkdf(file_key, kFileKey, NULL, 0, "header", mac_key, kKey);
  hmac(mac_key, (const unsigned char*)header, offsetof(struct Header, mac), header->mac);
  hkdf(file_key, kFileKey, header->nonce, kNonce, "payload", payload_key, kKey);
  OPENSSL_cleanse(mac_key, sizeof mac_key);
}

static void write_as_paes_does(const char* path, const void* header, size_t header_len, const void* body,
                               size_t body_len) {
  char temporary[4096];
  snprintf(temporary, sizeof temporary, "%s.floor-tmp", path);
  const int fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  need(fd >= 0 && write(fd, header, header_len) == (ssize_t)header_len &&
           write(fd, body, body_len) == (ssize_t)body_len && fsync(fd) == 0 && rename(temporary, path) == 0 &&
           close(fd) == 0,
       "writing the output");
  char dir_path[4096];
  snprintf(dir_path, sizeof dir_path, "%s", path);
  char* slash = strrchr(dir_path, '/');
  if (slash == NULL) {
    snprintf(dir_path, sizeof dir_path, ".");
  } else {
    slash[slash == dir_path ? 1 : 0] = '\0';
  }
  const int dir = open(dir_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  need(dir >= 0 && fsync(dir) == 0 && close(dir) == 0, "syncing the directory");
}

int main(int argc, char** argv) {
  if (argc != 5) {
    fprintf(stderr, "usage: start_up_floor seal age1RECIPIENT IN OUT | open IDENTITY_FILE IN OUT\n");
    return 2;
  }
  // As paes sets OpenSSL up for one command (src/util/openssl_set_up.cpp).
  OPENSSL_init_crypto(OPENSSL_INIT_NO_LOAD_CONFIG | OPENSSL_INIT_NO_ATEXIT | OPENSSL_INIT_NO_ADD_ALL_CIPHERS |
                          OPENSSL_INIT_NO_ADD_ALL_DIGESTS | OPENSSL_INIT_NO_LOAD_CRYPTO_STRINGS,
                      NULL);
  static unsigned char in[kMaxText + sizeof(struct Header) + kTag];
  static unsigned char out[kMaxText + kTag];
  const int input = open(argv[3], O_RDONLY | O_CLOEXEC);
  need(input >= 0, "opening the input");
  const ssize_t in_len = read(input, in, sizeof in);
  need(in_len >= 0 && close(input) == 0, "reading the input");
  struct Header header;
  unsigned char file_key[kFileKey];
  unsigned char payload_key[kKey];
  unsigned char shared[kKey];
  unsigned char wrap_key[kKey];
  unsigned char salt[2 * kKey];
  const int seal = strcmp(argv[1], "seal") == 0;
  if (seal) {
    need(in_len <= kMaxText, "a short input");
    unsigned char recipient[kKey];
    bech32_key(argv[2], recipient);
    need(RAND_bytes(file_key, kFileKey) == 1 && RAND_bytes(header.nonce, kNonce) == 1, "RAND_bytes");
    EVP_PKEY* ephemeral = EVP_PKEY_Q_keygen(NULL, NULL, "X25519");
    size_t share_len = kKey;
    need(ephemeral != NULL && EVP_PKEY_get_raw_public_key(ephemeral, header.share, &share_len) == 1, "X25519");
    x25519(ephemeral, recipient, shared);
    EVP_PKEY_free(ephemeral);
    memcpy(salt, header.share, kKey);
    memcpy(salt + kKey, recipient, kKey);
    hkdf(shared, kKey, salt, sizeof salt, "age-encryption.org/v1/X25519", wrap_key, kKey);
    aead("ChaCha20-Poly1305", 1, wrap_key, file_key, kFileKey, header.wrapped);
    file_keys(file_key, &header, payload_key);
    aead("AES-256-GCM", 1, payload_key, in, (int)in_len, out);
    write_as_paes_does(argv[4], &header, sizeof header, out, (size_t)in_len + kTag);
  } else {
    need(in_len >= (ssize_t)(sizeof header + kTag), "a sealed input");
    memcpy(&header, in, sizeof header);
    char identity[256] = {0};
    FILE* file = fopen(argv[2], "r");
    need(file != NULL, "opening the identity");
    while (fgets(identity, sizeof identity, file) != NULL && strncasecmp(identity, "AGE-SECRET-KEY-1", 16) != 0) {
    }
    fclose(file);
    unsigned char secret[kKey];
    bech32_key(identity, secret);
    OPENSSL_cleanse(identity, sizeof identity);
    EVP_PKEY* own = EVP_PKEY_new_raw_private_key(EVP_PKEY_X25519, NULL, secret, kKey);
    unsigned char own_public[kKey];
    size_t public_len = kKey;
    need(own != NULL && EVP_PKEY_get_raw_public_key(own, own_public, &public_len) == 1, "X25519");
    x25519(own, header.share, shared);
    EVP_PKEY_free(own);
    memcpy(salt, header.share, kKey);
    memcpy(salt + kKey, own_public, kKey);
    hkdf(shared, kKey, salt, sizeof salt, "age-encryption.org/v1/X25519", wrap_key, kKey);
    aead("ChaCha20-Poly1305", 0, wrap_key, header.wrapped, kFileKey, file_key);
    const struct Header sealed = header;
    file_keys(file_key, &header, payload_key);
    need(CRYPTO_memcmp(sealed.mac, header.mac, kKey) == 0, "the header's MAC");
    const int text_len = (int)(in_len - (ssize_t)sizeof header - kTag);
    aead("AES-256-GCM", 0, payload_key, in + sizeof header, text_len, out);
    write_as_paes_does(argv[4], NULL, 0, out, (size_t)text_len);
    OPENSSL_cleanse(secret, sizeof secret);
  }
  OPENSSL_cleanse(file_key, sizeof file_key);
  OPENSSL_cleanse(payload_key, sizeof payload_key);
  OPENSSL_cleanse(shared, sizeof shared);
  OPENSSL_cleanse(wrap_key, sizeof wrap_key);
  return 0;
}
