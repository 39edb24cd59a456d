package jsontree

import "strconv"

// AppendCanonical appends a canonical text of v (JSON-like, object members sorted, strings
// written as <length>"<bytes>"): equal trees give equal text, different trees different text.
// The reference for WriteCanonical, which writes the same text in pieces.
func (v Value) AppendCanonical(b []byte) []byte {
	switch v.Kind {
	case Object:
		b = append(b, '{')
		for i, m := range v.Members {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, m.Key)
			b = append(b, ':')
			b = m.Value.AppendCanonical(b)
		}
		return append(b, '}')
	case Array:
		b = append(b, '[')
		for i, item := range v.Items {
			if i > 0 {
				b = append(b, ',')
			}
			b = item.AppendCanonical(b)
		}
		return append(b, ']')
	case String:
		return appendString(b, v.Text)
	}
	return append(b, v.Text...)
}

// appendString writes s with its length in front, so no character needs escaping.
func appendString(b []byte, s string) []byte {
	b = strconv.AppendInt(b, int64(len(s)), 10)
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
