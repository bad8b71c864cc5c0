package labels

import (
	"fmt"
	"slices"
	"strings"

	"github.com/converge-dev/converge/framework/api/field"
	"github.com/converge-dev/converge/framework/api/validation"
)

// token is a lexical token of the selector syntax.
type token int

const (
	tokError token = iota
	tokEnd
	tokClosedPar
	tokComma
	tokDoesNotExist
	tokDoubleEquals
	tokEquals
	tokGreaterThan
	tokIdentifier
	tokIn
	tokLessThan
	tokNotEquals
	tokNotIn
	tokOpenPar
)

// lookupToken maps a literal to its token; identifiers are not listed.
func lookupToken(lit string) (token, bool) {
	switch lit {
	case ")":
		return tokClosedPar, true
	case ",":
		return tokComma, true
	case "!":
		return tokDoesNotExist, true
	case "==":
		return tokDoubleEquals, true
	case "=":
		return tokEquals, true
	case ">":
		return tokGreaterThan, true
	case "in":
		return tokIn, true
	case "<":
		return tokLessThan, true
	case "!=":
		return tokNotEquals, true
	case "notin":
		return tokNotIn, true
	case "(":
		return tokOpenPar, true
	}
	return tokError, false
}

func isWhitespace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

func isSpecial(c byte) bool {
	switch c {
	case '=', '!', '(', ')', ',', '>', '<':
		return true
	}
	return false
}

type item struct {
	tok token
	lit string
}

// lex splits s into items, ending with tokEnd.
func lex(s string) []item {
	var items []item
	i := 0
	for {
		for i < len(s) && isWhitespace(s[i]) {
			i++
		}
		if i == len(s) {
			return append(items, item{tokEnd, ""})
		}
		start := i
		if !isSpecial(s[i]) {
			for i < len(s) && !isSpecial(s[i]) && !isWhitespace(s[i]) {
				i++
			}
			lit := s[start:i]
			if tok, ok := lookupToken(lit); ok {
				items = append(items, item{tok, lit})
			} else {
				items = append(items, item{tokIdentifier, lit})
			}
			continue
		}
		// The longest run of special characters that is an operator.
		last, lastEnd := tokError, start
		for j := start + 1; j <= len(s) && isSpecial(s[j-1]); j++ {
			if tok, ok := lookupToken(s[start:j]); ok {
				last, lastEnd = tok, j
			} else if last != tokError {
				break
			}
		}
		if last == tokError {
			return append(items, item{tokError, fmt.Sprintf("error expected: keyword found '%s'", s[start:])})
		}
		items = append(items, item{last, s[start:lastEnd]})
		i = lastEnd
	}
}

// parser is a recursive-descent parser over the lexed items.
type parser struct {
	items []item
	pos   int
}

// inValues turns the keywords in and notin into identifiers: in a value (or
// key) position they are plain words.
func inValues(it item) item {
	if it.tok == tokIn || it.tok == tokNotIn {
		it.tok = tokIdentifier
	}
	return it
}

func (p *parser) peek() item { return inValues(p.items[p.pos]) }

func (p *parser) next() item {
	it := p.items[p.pos]
	if it.tok != tokEnd && it.tok != tokError {
		p.pos++
	}
	return it
}

// Parse parses a label selector such as "app in (a,b),tier!=x,!legacy".
// The empty string selects everything.
func Parse(s string) (Selector, error) {
	reqs, err := parse(s)
	if err != nil {
		return nil, err
	}
	return newSelector(reqs), nil
}

func parse(s string) ([]Requirement, error) {
	p := &parser{items: lex(s)}
	var reqs []Requirement
	for {
		it := p.peek()
		switch it.tok {
		case tokIdentifier, tokDoesNotExist:
			r, err := p.parseRequirement()
			if err != nil {
				return nil, fmt.Errorf("unable to parse requirement: %w", err)
			}
			reqs = append(reqs, r)
			switch sep := inValues(p.next()); sep.tok {
			case tokEnd:
				return reqs, nil
			case tokComma:
				if n := p.peek(); n.tok != tokIdentifier && n.tok != tokDoesNotExist {
					return nil, fmt.Errorf("found '%s', expected: identifier after ','", n.lit)
				}
			default:
				return nil, fmt.Errorf("found '%s', expected: ',' or 'end of string'", sep.lit)
			}
		case tokEnd:
			return reqs, nil
		default:
			return nil, fmt.Errorf("found '%s', expected: !, identifier, or 'end of string'", it.lit)
		}
	}
}

func (p *parser) parseRequirement() (Requirement, error) {
	key, op, err := p.parseKeyAndInferOperator()
	if err != nil {
		return Requirement{}, err
	}
	if op == Exists || op == DoesNotExist {
		return NewRequirement(key, op, nil)
	}
	if op, err = p.parseOperator(); err != nil {
		return Requirement{}, err
	}
	var values []string
	switch op {
	case In, NotIn:
		values, err = p.parseValues()
	default:
		values, err = p.parseExactValue()
	}
	if err != nil {
		return Requirement{}, err
	}
	return NewRequirement(key, op, values)
}

// parseKeyAndInferOperator reads [!]key; a key followed by ',' or the end is
// an exists requirement.
func (p *parser) parseKeyAndInferOperator() (string, Operator, error) {
	var op Operator
	it := inValues(p.next())
	if it.tok == tokDoesNotExist {
		op = DoesNotExist
		it = inValues(p.next())
	}
	if it.tok != tokIdentifier {
		return "", "", fmt.Errorf("found '%s', expected: identifier", it.lit)
	}
	if msgs := validation.IsQualifiedName(it.lit); len(msgs) != 0 {
		// Kubernetes reports a bad key here at the root path ("<nil>").
		return "", "", field.ErrorList{field.Invalid(nil, it.lit, strings.Join(msgs, "; "))}.ToError()
	}
	if n := p.peek(); (n.tok == tokEnd || n.tok == tokComma) && op != DoesNotExist {
		op = Exists
	}
	return it.lit, op, nil
}

func (p *parser) parseOperator() (Operator, error) {
	it := p.next()
	switch it.tok {
	case tokIn:
		return In, nil
	case tokEquals:
		return Equals, nil
	case tokDoubleEquals:
		return DoubleEquals, nil
	case tokGreaterThan:
		return GreaterThan, nil
	case tokLessThan:
		return LessThan, nil
	case tokNotIn:
		return NotIn, nil
	case tokNotEquals:
		return NotEquals, nil
	}
	return "", fmt.Errorf("found '%s', expected: in, notin, =, ==, !=, gt, lt", it.lit)
}

// parseValues reads "(a,b,...)"; "()" and empty list entries are the empty
// value.
func (p *parser) parseValues() ([]string, error) {
	if it := inValues(p.next()); it.tok != tokOpenPar {
		return nil, fmt.Errorf("found '%s' expected: '('", it.lit)
	}
	switch it := p.peek(); it.tok {
	case tokIdentifier, tokComma:
		values, err := p.parseIdentifiersList()
		if err != nil {
			return nil, err
		}
		if c := p.next(); c.tok != tokClosedPar {
			return nil, fmt.Errorf("found '%s', expected: ')'", c.lit)
		}
		return values, nil
	case tokClosedPar:
		p.next()
		return []string{""}, nil
	default:
		return nil, fmt.Errorf("found '%s', expected: ',', ')' or identifier", it.lit)
	}
}

// parseIdentifiersList reads a comma-separated list of possibly empty values,
// stopping before ')'.
func (p *parser) parseIdentifiersList() ([]string, error) {
	var values []string
	add := func(v string) {
		if !slices.Contains(values, v) {
			values = append(values, v)
		}
	}
	for {
		it := inValues(p.next())
		switch it.tok {
		case tokIdentifier:
			add(it.lit)
			switch n := p.peek(); n.tok {
			case tokComma:
				continue
			case tokClosedPar:
				return values, nil
			default:
				return nil, fmt.Errorf("found '%s', expected: ',' or ')'", n.lit)
			}
		case tokComma:
			if len(values) == 0 {
				add("") // "(,"
			}
			switch n := p.peek(); n.tok {
			case tokClosedPar:
				add("") // ",)"
				return values, nil
			case tokComma:
				p.next()
				add("") // ",,"
			}
		default:
			return nil, fmt.Errorf("found '%s', expected: ',', or identifier", it.lit)
		}
	}
}

// parseExactValue reads the single value of =, ==, !=, > and <; nothing before
// ',' or the end is the empty value.
func (p *parser) parseExactValue() ([]string, error) {
	if n := p.peek(); n.tok == tokEnd || n.tok == tokComma {
		return []string{""}, nil
	}
	it := inValues(p.next())
	if it.tok == tokIdentifier {
		return []string{it.lit}, nil
	}
	return nil, fmt.Errorf("found '%s', expected: identifier", it.lit)
}
