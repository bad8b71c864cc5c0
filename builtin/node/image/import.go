package image

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/containerd/containerd/v2/client"
)

// ErrNoImages is returned by Import when the archive names no image.
var ErrNoImages = errors.New("image: archive names no image (no io.containerd.image.name or org.opencontainers.image.ref.name annotation, no docker RepoTags)")

// Import loads an OCI image layout archive or a `docker save` archive into
// containerd's content and image stores and returns the names of the images it
// created or updated, normalized ("docker.io/library/hello:latest"). The images
// go to the namespace in ctx, else the client's default namespace. Images are
// not unpacked: a runtime unpacks an image into its snapshotter when it first
// runs it. Only manifests for the client's platform are kept.
func Import(ctx context.Context, c *client.Client, archive io.Reader) ([]string, error) {
	imgs, err := c.Import(ctx, archive, client.WithImageRefTranslator(translateRef))
	if err != nil {
		return nil, fmt.Errorf("import image archive: %w", err)
	}
	var names []string
	for _, img := range imgs {
		names = append(names, img.Name)
	}
	if len(names) == 0 {
		return nil, ErrNoImages
	}
	return names, nil
}

// translateRef names an image from an OCI layout's ref.name annotation, which
// is often a bare tag ("latest"): bare tags cannot name an image and are
// dropped; references are normalized.
func translateRef(ref string) string {
	if !validName(ref) {
		return ""
	}
	if !strings.ContainsAny(ref, "/:@") {
		// A bare word is a tag, not a repository (OCI layout convention).
		return ""
	}
	return Normalize(ref)
}
