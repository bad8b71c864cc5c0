package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/converge-dev/converge/operators/generate"
)

func newOperatorGenerateCommand(g *globalOptions) *cobra.Command {
	var o generate.Options
	var crdDir, rbacDir string
	cmd := &cobra.Command{
		Use:   "generate [PACKAGES...]",
		Short: "Generate CRDs and RBAC from Go types with kubebuilder markers (controller-gen compatible)",
		Long: `Generate CustomResourceDefinitions from the Go types of packages marked +groupName, and a
ClusterRole (and Roles) from +kubebuilder:rbac markers, reading the markers controller-gen reads.
Each CRD is written to <crd-dir>/<group>_<plural>.yaml, the roles to <rbac-dir>/role.yaml.`,
		Example: `  converge operator generate ./... --crd-dir config/crd/bases --rbac-dir config/rbac
  converge operator generate ./api/... --crd-dir config/crd --rbac-dir ""`,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Patterns = args
			res, err := generate.Generate(cmd.Context(), o)
			if err != nil {
				return err
			}
			files, err := res.Write(crdDir, rbacDir)
			for _, f := range files {
				fmt.Fprintf(g.stdout, "wrote %s\n", f)
			}
			if err == nil && len(files) == 0 {
				fmt.Fprintln(g.stderr, "nothing to write: no package with +groupName and no +kubebuilder:rbac marker")
			}
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&crdDir, "crd-dir", "config/crd/bases", "directory for the CRDs (empty: none)")
	f.StringVar(&rbacDir, "rbac-dir", "config/rbac", "directory for role.yaml (empty: none)")
	f.StringVar(&o.RoleName, "role-name", "manager-role", "name of the ClusterRole of +kubebuilder:rbac markers without roleName")
	f.StringVarP(&o.Dir, "dir", "C", "", "directory the package patterns are relative to (default: the current one)")
	f.BoolVar(&o.AllowDangerousTypes, "allow-dangerous-types", false, "allow float fields (type number)")
	return cmd
}
