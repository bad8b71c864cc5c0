// Package encryption encrypts stored values at rest, like kube-apiserver's
// EncryptionConfiguration: a storage.Interface wrapper (Wrap) transforms the
// values of the selected resources on their way to storage and back, leaving
// keys, revisions and every other resource untouched.
//
// Each resource has an ordered list of providers. The first one encrypts every
// write; all of them are tried on reads, chosen by the prefix of the stored
// value: "k8s:enc:aesgcm:v1:NAME:" (AES-GCM, 12-byte random nonce, the storage
// key as additional data), "k8s:enc:aescbc:v1:NAME:" (AES-CBC with PKCS#7
// padding), and no prefix for the identity provider (plaintext, as stored
// before encryption was turned on). A value read with any provider but the
// first is reported as stale (storage.KeyValue.Stale) so that an update
// rewrites it with the current key even when nothing else changed: that is
// how keys are rotated (see docs/security.md).
package encryption
