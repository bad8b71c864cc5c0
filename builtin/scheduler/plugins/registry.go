package plugins

import (
	"github.com/converge-dev/converge/builtin/scheduler/plugin"
	"github.com/converge-dev/converge/builtin/scheduler/plugins/balancedallocation"
	"github.com/converge-dev/converge/builtin/scheduler/plugins/defaultbinder"
	"github.com/converge-dev/converge/builtin/scheduler/plugins/defaultpreemption"
	"github.com/converge-dev/converge/builtin/scheduler/plugins/imagelocality"
	"github.com/converge-dev/converge/builtin/scheduler/plugins/interpodaffinity"
	"github.com/converge-dev/converge/builtin/scheduler/plugins/nodeaffinity"
	"github.com/converge-dev/converge/builtin/scheduler/plugins/nodename"
	"github.com/converge-dev/converge/builtin/scheduler/plugins/nodeports"
	"github.com/converge-dev/converge/builtin/scheduler/plugins/noderesourcesfit"
	"github.com/converge-dev/converge/builtin/scheduler/plugins/nodeunschedulable"
	"github.com/converge-dev/converge/builtin/scheduler/plugins/podtopologyspread"
	"github.com/converge-dev/converge/builtin/scheduler/plugins/schedulinggates"
	"github.com/converge-dev/converge/builtin/scheduler/plugins/tainttoleration"
	"github.com/converge-dev/converge/builtin/scheduler/plugins/volumebinding"
)

// NewInTreeRegistry returns a new registry of the in-tree plugins.
func NewInTreeRegistry() plugin.Registry {
	return plugin.Registry{
		schedulinggates.Name:    schedulinggates.New,
		nodename.Name:           nodename.New,
		nodeunschedulable.Name:  nodeunschedulable.New,
		nodeports.Name:          nodeports.New,
		noderesourcesfit.Name:   noderesourcesfit.New,
		balancedallocation.Name: balancedallocation.New,
		nodeaffinity.Name:       nodeaffinity.New,
		tainttoleration.Name:    tainttoleration.New,
		imagelocality.Name:      imagelocality.New,
		defaultbinder.Name:      defaultbinder.New,
		podtopologyspread.Name:  podtopologyspread.New,
		interpodaffinity.Name:   interpodaffinity.New,
		volumebinding.Name:      volumebinding.New,
		defaultpreemption.Name:  defaultpreemption.New,
	}
}
