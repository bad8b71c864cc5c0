package validation

import (
	"fmt"
	"strings"
)

// Length limits of the name formats.
const (
	// DNS1123SubdomainMaxLength is the maximum length of an RFC 1123 subdomain.
	DNS1123SubdomainMaxLength = 253
	// DNS1123LabelMaxLength is the maximum length of an RFC 1123 label.
	DNS1123LabelMaxLength = 63
	// DNS1035LabelMaxLength is the maximum length of an RFC 1035 label.
	DNS1035LabelMaxLength = 63
	// QualifiedNameMaxLength is the maximum length of the name part of a
	// qualified name (label key, annotation key, finalizer).
	QualifiedNameMaxLength = 63
	// LabelValueMaxLength is the maximum length of a label value.
	LabelValueMaxLength = 63
)

const (
	qnameCharFmt        = "[A-Za-z0-9]"
	qnameExtCharFmt     = "[-A-Za-z0-9_.]"
	qualifiedNameFmt    = "(" + qnameCharFmt + qnameExtCharFmt + "*)?" + qnameCharFmt
	qualifiedNameErrMsg = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"

	labelValueFmt    = "(" + qualifiedNameFmt + ")?"
	labelValueErrMsg = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"

	dns1123LabelFmt    = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
	dns1123LabelErrMsg = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character"

	dns1123SubdomainFmt    = dns1123LabelFmt + "(\\." + dns1123LabelFmt + ")*"
	dns1123SubdomainErrMsg = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character"

	dns1035LabelFmt    = "[a-z]([-a-z0-9]*[a-z0-9])?"
	dns1035LabelErrMsg = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character"
)

// Matchers of the formats above, as anchored regular expressions would match
// them (match_test.go checks them against the expressions).

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func isLowerAlnum(c byte) bool { return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' }

// matchQualifiedName matches qualifiedNameFmt.
func matchQualifiedName(s string) bool {
	if s == "" || !isAlnum(s[0]) || !isAlnum(s[len(s)-1]) {
		return false
	}
	for i := 1; i < len(s)-1; i++ {
		if c := s[i]; !isAlnum(c) && c != '-' && c != '_' && c != '.' {
			return false
		}
	}
	return true
}

// matchLabelValue matches labelValueFmt.
func matchLabelValue(s string) bool { return s == "" || matchQualifiedName(s) }

// matchDNS1123Label matches dns1123LabelFmt.
func matchDNS1123Label(s string) bool {
	if s == "" || !isLowerAlnum(s[0]) || !isLowerAlnum(s[len(s)-1]) {
		return false
	}
	for i := 1; i < len(s)-1; i++ {
		if c := s[i]; !isLowerAlnum(c) && c != '-' {
			return false
		}
	}
	return true
}

// matchDNS1123Subdomain matches dns1123SubdomainFmt.
func matchDNS1123Subdomain(s string) bool {
	for {
		label, rest, more := strings.Cut(s, ".")
		if !matchDNS1123Label(label) {
			return false
		}
		if !more {
			return true
		}
		s = rest
	}
}

// matchDNS1035Label matches dns1035LabelFmt.
func matchDNS1035Label(s string) bool {
	return s != "" && s[0] >= 'a' && s[0] <= 'z' && matchDNS1123Label(s)
}

// IsQualifiedName checks a "qualified name": an optional RFC 1123 subdomain
// prefix and '/', then a name of at most 63 alphanumeric characters, '-', '_'
// or '.', starting and ending with an alphanumeric character. Label keys,
// annotation keys (lowercased) and finalizers are qualified names.
func IsQualifiedName(value string) []string {
	var errs []string
	parts := strings.Split(value, "/")
	var name string
	switch len(parts) {
	case 1:
		name = parts[0]
	case 2:
		var prefix string
		prefix, name = parts[0], parts[1]
		if prefix == "" {
			errs = append(errs, "prefix part "+EmptyError())
		} else if msgs := IsDNS1123Subdomain(prefix); len(msgs) != 0 {
			for _, m := range msgs {
				errs = append(errs, "prefix part "+m)
			}
		}
	default:
		return append(errs, "a qualified name "+RegexError(qualifiedNameErrMsg, qualifiedNameFmt, "MyName", "my.name", "123-abc")+
			" with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')")
	}
	if name == "" {
		errs = append(errs, "name part "+EmptyError())
	} else if len(name) > QualifiedNameMaxLength {
		errs = append(errs, "name part "+MaxLenError(QualifiedNameMaxLength))
	}
	if !matchQualifiedName(name) {
		errs = append(errs, "name part "+RegexError(qualifiedNameErrMsg, qualifiedNameFmt, "MyName", "my.name", "123-abc"))
	}
	return errs
}

// IsValidLabelValue checks a label value: empty, or at most 63 alphanumeric
// characters, '-', '_' or '.', starting and ending with an alphanumeric character.
func IsValidLabelValue(value string) []string {
	var errs []string
	if len(value) > LabelValueMaxLength {
		errs = append(errs, MaxLenError(LabelValueMaxLength))
	}
	if !matchLabelValue(value) {
		errs = append(errs, RegexError(labelValueErrMsg, labelValueFmt, "MyValue", "my_value", "12345"))
	}
	return errs
}

// IsDNS1123Label checks an RFC 1123 label: at most 63 lower case alphanumeric
// characters or '-', starting and ending with an alphanumeric character.
// Namespace names are DNS labels.
func IsDNS1123Label(value string) []string {
	var errs []string
	if len(value) > DNS1123LabelMaxLength {
		errs = append(errs, MaxLenError(DNS1123LabelMaxLength))
	}
	if !matchDNS1123Label(value) {
		if matchDNS1123Subdomain(value) {
			// A valid subdomain but not a valid label: the length was checked
			// above, so the problem is the dots.
			errs = append(errs, "must not contain dots")
		} else {
			errs = append(errs, RegexError(dns1123LabelErrMsg, dns1123LabelFmt, "my-name", "123-abc"))
		}
	}
	return errs
}

// IsDNS1123Subdomain checks an RFC 1123 subdomain: at most 253 characters,
// dot-separated RFC 1123 labels. Most object names are DNS subdomains.
func IsDNS1123Subdomain(value string) []string {
	var errs []string
	if len(value) > DNS1123SubdomainMaxLength {
		errs = append(errs, MaxLenError(DNS1123SubdomainMaxLength))
	}
	if !matchDNS1123Subdomain(value) {
		errs = append(errs, RegexError(dns1123SubdomainErrMsg, dns1123SubdomainFmt, "example.com"))
	}
	return errs
}

// IsDNS1035Label checks an RFC 1035 label: at most 63 lower case alphanumeric
// characters or '-', starting with a letter and ending with an alphanumeric
// character. Service names are DNS-1035 labels.
func IsDNS1035Label(value string) []string {
	var errs []string
	if len(value) > DNS1035LabelMaxLength {
		errs = append(errs, MaxLenError(DNS1035LabelMaxLength))
	}
	if !matchDNS1035Label(value) {
		errs = append(errs, RegexError(dns1035LabelErrMsg, dns1035LabelFmt, "my-name", "abc-123"))
	}
	return errs
}

// NameFunc validates an object name for one kind of resource. prefix is true
// when name is a generateName, to which a random suffix will be appended; a
// trailing '-' is then allowed. It returns one message per violated rule.
type NameFunc func(name string, prefix bool) []string

var (
	_ NameFunc = NameIsDNSSubdomain
	_ NameFunc = NameIsDNSLabel
	_ NameFunc = NameIsDNS1035Label
)

// NameIsDNSSubdomain is the NameFunc of resources whose names are RFC 1123
// subdomains (the default).
func NameIsDNSSubdomain(name string, prefix bool) []string {
	if prefix {
		name = maskTrailingDash(name)
	}
	return IsDNS1123Subdomain(name)
}

// NameIsDNSLabel is the NameFunc of resources whose names are RFC 1123 labels,
// such as namespaces.
func NameIsDNSLabel(name string, prefix bool) []string {
	if prefix {
		name = maskTrailingDash(name)
	}
	return IsDNS1123Label(name)
}

// NameIsDNS1035Label is the NameFunc of resources whose names are RFC 1035
// labels, such as services.
func NameIsDNS1035Label(name string, prefix bool) []string {
	if prefix {
		name = maskTrailingDash(name)
	}
	return IsDNS1035Label(name)
}

// ValidateNamespaceName validates a namespace name (an RFC 1123 label).
func ValidateNamespaceName(name string, prefix bool) []string { return NameIsDNSLabel(name, prefix) }

// maskTrailingDash makes a generateName with a trailing '-' validate like the
// names generated from it, exactly as Kubernetes does: the last two characters
// are replaced by "a".
func maskTrailingDash(name string) string {
	if len(name) > 1 && strings.HasSuffix(name, "-") {
		return name[:len(name)-2] + "a"
	}
	return name
}

// MaxLenError is the message for a string longer than length characters.
func MaxLenError(length int) string {
	return fmt.Sprintf("must be no more than %d characters", length)
}

// EmptyError is the message for an empty string that must not be empty.
func EmptyError() string { return "must be non-empty" }

// RegexError is the message for a value that does not match the regular
// expression format: msg, then the examples and the expression in parentheses.
func RegexError(msg, format string, examples ...string) string {
	if len(examples) == 0 {
		return msg + " (regex used for validation is '" + format + "')"
	}
	var b strings.Builder
	b.WriteString(msg)
	b.WriteString(" (e.g. ")
	for i, e := range examples {
		if i > 0 {
			b.WriteString(" or ")
		}
		b.WriteString("'" + e + "', ")
	}
	b.WriteString("regex used for validation is '" + format + "')")
	return b.String()
}
