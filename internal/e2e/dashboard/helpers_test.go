package dashboard

import (
	"os"
	"path/filepath"
	"strconv"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func itoa(n int) string { return strconv.Itoa(n) }

// writeTemp writes content to a temporary file named name and returns its path.
func writeTemp(name, content string) string {
	GinkgoHelper()
	p := filepath.Join(GinkgoT().TempDir(), name)
	Expect(os.WriteFile(p, []byte(content), 0o600)).To(Succeed())
	return p
}
