// Package curve generates and validates ZeroMQ CURVE certificates in the
// format read by Flux Framework brokers (flux-core's cert_read), in pure Go:
// no cgo and no ZeroMQ library.
//
// Keys are X25519 key pairs (crypto/ecdh), written as Z85 text (ZeroMQ RFC
// 32). The certificate layout is the one `flux keygen` writes; the reader is
// as strict as Flux's and also accepts the older CZMQ layout the Flux
// Operator used to produce.
package curve

import (
	"errors"
	"fmt"
)

// z85Alphabet is the Z85 encoding alphabet from ZeroMQ RFC 32.
const z85Alphabet = "0123456789" +
	"abcdefghijklmnopqrstuvwxyz" +
	"ABCDEFGHIJKLMNOPQRSTUVWXYZ" +
	".-:+=^!/*?&<>()[]{}@%$#"

// z85Decoder maps a byte to its Z85 digit value, or 0xFF if the byte is not
// in the alphabet.
var z85Decoder = func() [256]byte {
	var t [256]byte
	for i := range t {
		t[i] = 0xFF
	}
	for i := 0; i < len(z85Alphabet); i++ {
		t[z85Alphabet[i]] = byte(i)
	}
	return t
}()

// Errors returned (wrapped) by Z85Encode and Z85Decode. Error messages never
// contain the input text, so they are safe to log for secret keys.
var (
	ErrZ85Length    = errors.New("z85: bad length")
	ErrZ85Character = errors.New("z85: invalid character")
	ErrZ85Overflow  = errors.New("z85: group value exceeds 32 bits")
)

// Z85Encode encodes src as Z85 text. len(src) must be a multiple of 4.
func Z85Encode(src []byte) (string, error) {
	if len(src)%4 != 0 {
		return "", fmt.Errorf("%w: input is %d bytes, not a multiple of 4", ErrZ85Length, len(src))
	}
	out := make([]byte, 0, len(src)/4*5)
	for i := 0; i < len(src); i += 4 {
		v := uint32(src[i])<<24 | uint32(src[i+1])<<16 | uint32(src[i+2])<<8 | uint32(src[i+3])
		var group [5]byte
		for j := 4; j >= 0; j-- {
			group[j] = z85Alphabet[v%85]
			v /= 85
		}
		out = append(out, group[:]...)
	}
	return string(out), nil
}

// Z85Decode decodes Z85 text. len(s) must be a multiple of 5, every byte
// must be in the Z85 alphabet and every 5-character group must represent a
// value below 2^32 (libzmq's zmq_z85_decode rejects larger values too).
// Errors give the position of a bad character but never the character or the
// text itself.
func Z85Decode(s string) ([]byte, error) {
	if len(s)%5 != 0 {
		return nil, fmt.Errorf("%w: input is %d characters, not a multiple of 5", ErrZ85Length, len(s))
	}
	out := make([]byte, 0, len(s)/5*4)
	for i := 0; i < len(s); i += 5 {
		var v uint64
		for j := i; j < i+5; j++ {
			d := z85Decoder[s[j]]
			if d == 0xFF {
				return nil, fmt.Errorf("%w at position %d", ErrZ85Character, j+1)
			}
			v = v*85 + uint64(d)
		}
		if v > 0xFFFFFFFF {
			return nil, fmt.Errorf("%w (characters %d-%d)", ErrZ85Overflow, i+1, i+5)
		}
		out = append(out, byte(v>>24), byte(v>>16), byte(v>>8), byte(v))
	}
	return out, nil
}
