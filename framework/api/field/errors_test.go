package field

import "testing"

func TestErrorFormats(t *testing.T) {
	t.Parallel()
	root := NewPath("spec")
	cases := []struct {
		err  *Error
		want string
	}{
		{Required(root.Child("to"), ""), "spec.to: Required value"},
		{Invalid(root.Child("replicas"), int64(11), "spec.replicas in body should be less than or equal to 10"),
			"spec.replicas: Invalid value: 11: spec.replicas in body should be less than or equal to 10"},
		{Invalid(root.Child("replicas"), "string", "x"), `spec.replicas: Invalid value: "string": x`},
		{NotSupported(root.Child("b"), "owner", []string{"none", "self"}), `spec.b: Unsupported value: "owner": supported values: "none", "self"`},
		{TooLong(root.Child("from").Index(0).Child("namespace"), "aaa", 63), "spec.from[0].namespace: Too long: may not be more than 63 bytes"},
		{TooMany(root.Child("from"), 17, 16), "spec.from: Too many: 17: must have at most 16 items"},
		{Invalid(nil, "null", "some rules"), `<nil>: Invalid value: "null": some rules`},
		{Forbidden(root.Child("x").Key("k"), "nope"), "spec.x[k]: Forbidden: nope"},
		{Invalid(root, nil, "d"), "spec: Invalid value: null: d"},
	}
	for _, c := range cases {
		if got := c.err.Error(); got != c.want {
			t.Errorf("got %q, want %q", got, c.want)
		}
	}
	l := ErrorList{Required(root.Child("a"), ""), Required(root.Child("b"), "")}
	if got := l.ToError().Error(); got != "[spec.a: Required value, spec.b: Required value]" {
		t.Errorf("aggregate: %q", got)
	}
}
