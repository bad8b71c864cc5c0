// Package image makes container images without a registry: Build packs one static
// binary into an OCI image archive (standard library only), Import loads OCI or
// Docker image archives into containerd, and Normalize turns a short reference
// ("hello") into the full name containerd stores ("docker.io/library/hello:latest").
//
// Build's archive is an OCI image layout tarred: oci-layout, index.json (the image
// name in the io.containerd.image.name and org.opencontainers.image.ref.name
// annotations), and under blobs/sha256 one uncompressed layer, the config and the
// manifest. The output is reproducible: the same binary and options give the same
// bytes and digests (file times are the Unix epoch).
//
// Import stores the images under their normalized names in the client's
// namespace (or the one in ctx) without unpacking them; a runtime unpacks an
// image into its snapshotter when it first runs it.
package image
