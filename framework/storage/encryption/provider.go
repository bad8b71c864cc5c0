package encryption

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"errors"
	"fmt"
)

// prefixAny is what every encrypted value starts with.
const prefixAny = "k8s:enc:"

// transformer encrypts with one key and decrypts values carrying its prefix.
type transformer interface {
	prefix() []byte
	encrypt(plain []byte, key string) ([]byte, error)
	decrypt(data []byte, key string) ([]byte, error) // data without the prefix
}

// Providers is the ordered provider list of a resource: the first writes, all
// read.
type Providers struct {
	list     []transformer // in order; nil entry for identity
	identity bool          // identity is one of them (plaintext reads)
}

// encode encrypts plain for key with the first provider.
func (p *Providers) encode(plain []byte, key string) ([]byte, error) {
	t := p.list[0]
	if t == nil {
		return plain, nil
	}
	return t.encrypt(plain, key)
}

// decode decrypts data stored under key; stale is set when the first provider
// would have written something else.
func (p *Providers) decode(data []byte, key string) (plain []byte, stale bool, err error) {
	if bytes.HasPrefix(data, []byte(prefixAny)) {
		for i, t := range p.list {
			if t == nil || !bytes.HasPrefix(data, t.prefix()) {
				continue
			}
			out, err := t.decrypt(data[len(t.prefix()):], key)
			if err != nil {
				return nil, false, fmt.Errorf("decrypt %q with %s: %w", key, t.prefix(), err)
			}
			return out, i != 0, nil
		}
		end := bytes.IndexByte(data[len(prefixAny):], ':')
		name := data[:min(len(data), len(prefixAny)+max(end, 0)+1)]
		return nil, false, fmt.Errorf("decrypt %q: no provider for a value starting %q", key, name)
	}
	if !p.identity {
		return nil, false, fmt.Errorf("decrypt %q: value is not encrypted and the identity provider is not configured", key)
	}
	return data, p.list[0] != nil, nil
}

// newProviders builds the transformers of a provider list.
func newProviders(cfgs []ProviderConfiguration) (*Providers, error) {
	if len(cfgs) == 0 {
		return nil, errors.New("no providers")
	}
	p := &Providers{}
	for i, c := range cfgs {
		n := 0
		for _, set := range []bool{c.AESGCM != nil, c.AESCBC != nil, c.Identity != nil, c.Secretbox != nil, c.KMS != nil} {
			if set {
				n++
			}
		}
		if n != 1 {
			return nil, fmt.Errorf("provider %d: exactly one of aesgcm, aescbc, identity must be set", i)
		}
		switch {
		case c.Identity != nil:
			p.list = append(p.list, nil)
			p.identity = true
		case c.AESGCM != nil:
			ts, err := keyTransformers(c.AESGCM, newGCM)
			if err != nil {
				return nil, fmt.Errorf("provider %d (aesgcm): %w", i, err)
			}
			p.list = append(p.list, ts...)
		case c.AESCBC != nil:
			ts, err := keyTransformers(c.AESCBC, newCBC)
			if err != nil {
				return nil, fmt.Errorf("provider %d (aescbc): %w", i, err)
			}
			p.list = append(p.list, ts...)
		default:
			return nil, fmt.Errorf("provider %d: only aesgcm, aescbc and identity are supported", i)
		}
	}
	return p, nil
}

func keyTransformers(kc *KeysConfiguration, mk func(name string, key []byte) (transformer, error)) ([]transformer, error) {
	if len(kc.Keys) == 0 {
		return nil, errors.New("no keys")
	}
	seen := map[string]bool{}
	var out []transformer
	for _, k := range kc.Keys {
		if seen[k.Name] {
			return nil, fmt.Errorf("key %q listed twice", k.Name)
		}
		seen[k.Name] = true
		b, err := decodeKey(k)
		if err != nil {
			return nil, err
		}
		t, err := mk(k.Name, b)
		if err != nil {
			return nil, fmt.Errorf("key %q: %w", k.Name, err)
		}
		out = append(out, t)
	}
	return out, nil
}

// gcm is AES-GCM: nonce || sealed, with the storage key as additional data.
type gcm struct {
	pfx  []byte
	aead cipher.AEAD
}

func newGCM(name string, key []byte) (transformer, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &gcm{pfx: []byte("k8s:enc:aesgcm:v1:" + name + ":"), aead: aead}, nil
}

func (g *gcm) prefix() []byte { return g.pfx }

func (g *gcm) encrypt(plain []byte, key string) ([]byte, error) {
	ns := g.aead.NonceSize()
	out := make([]byte, len(g.pfx)+ns, len(g.pfx)+ns+len(plain)+g.aead.Overhead())
	copy(out, g.pfx)
	if _, err := rand.Read(out[len(g.pfx):]); err != nil {
		return nil, fmt.Errorf("read nonce: %w", err)
	}
	return g.aead.Seal(out, out[len(g.pfx):], plain, []byte(key)), nil
}

func (g *gcm) decrypt(data []byte, key string) ([]byte, error) {
	ns := g.aead.NonceSize()
	if len(data) < ns+g.aead.Overhead() {
		return nil, errors.New("value too short")
	}
	return g.aead.Open(nil, data[:ns], data[ns:], []byte(key))
}

// cbc is AES-CBC with PKCS#7 padding: iv || ciphertext (no authentication,
// kept for configurations written for kube-apiserver).
type cbc struct {
	pfx   []byte
	block cipher.Block
}

func newCBC(name string, key []byte) (transformer, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return &cbc{pfx: []byte("k8s:enc:aescbc:v1:" + name + ":"), block: block}, nil
}

func (c *cbc) prefix() []byte { return c.pfx }

func (c *cbc) encrypt(plain []byte, _ string) ([]byte, error) {
	bs := c.block.BlockSize()
	pad := bs - len(plain)%bs
	out := make([]byte, len(c.pfx)+bs+len(plain)+pad)
	copy(out, c.pfx)
	iv := out[len(c.pfx) : len(c.pfx)+bs]
	if _, err := rand.Read(iv); err != nil {
		return nil, fmt.Errorf("read iv: %w", err)
	}
	body := out[len(c.pfx)+bs:]
	copy(body, plain)
	for i := len(plain); i < len(body); i++ {
		body[i] = byte(pad)
	}
	cipher.NewCBCEncrypter(c.block, iv).CryptBlocks(body, body)
	return out, nil
}

func (c *cbc) decrypt(data []byte, _ string) ([]byte, error) {
	bs := c.block.BlockSize()
	if len(data) < 2*bs || len(data)%bs != 0 {
		return nil, errors.New("value is not a whole number of blocks")
	}
	out := make([]byte, len(data)-bs)
	cipher.NewCBCDecrypter(c.block, data[:bs]).CryptBlocks(out, data[bs:])
	pad := int(out[len(out)-1])
	if pad == 0 || pad > bs || pad > len(out) {
		return nil, errors.New("invalid padding")
	}
	for _, b := range out[len(out)-pad:] {
		if int(b) != pad {
			return nil, errors.New("invalid padding")
		}
	}
	return out[:len(out)-pad], nil
}
