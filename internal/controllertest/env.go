package controllertest

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"sigs.k8s.io/yaml"

	"github.com/converge-dev/converge/builtin/api/all"
	corev1 "github.com/converge-dev/converge/builtin/api/core/v1"
	"github.com/converge-dev/converge/framework/api"
	apierrors "github.com/converge-dev/converge/framework/api/errors"
	"github.com/converge-dev/converge/framework/client"
	"github.com/converge-dev/converge/framework/manager"
	"github.com/converge-dev/converge/framework/scheme"
	"github.com/converge-dev/converge/testenv"
)

// Env is the control plane of one controller suite and a client of it.
type Env struct {
	*testenv.Environment
	// Client talks to the control plane's API server; Scheme is its scheme
	// (every built-in kind).
	Client *client.Client
	Scheme *scheme.Scheme

	prefix string
	n      atomic.Int32
}

// Start starts an in-process control plane with opts (the built-in
// controllers the suite tests in opts.Controllers) and a client of it, and
// sets Gomega's Eventually defaults to 10s and 50ms. Namespace names begin
// with prefix. The control plane outlives ctx (a BeforeSuite context); stop
// it with Stop.
func Start(ctx context.Context, prefix string, opts testenv.Options) *Env {
	SetDefaultEventuallyTimeout(10 * time.Second)
	SetDefaultEventuallyPollingInterval(50 * time.Millisecond)
	env, err := testenv.Start(context.WithoutCancel(ctx), opts)
	Expect(err).NotTo(HaveOccurred())
	sch, err := all.NewScheme()
	Expect(err).NotTo(HaveOccurred())
	c, err := client.New(&client.Config{Host: env.URL}, client.Options{Scheme: sch})
	Expect(err).NotTo(HaveOccurred())
	return &Env{Environment: env, Client: c, Scheme: sch, prefix: prefix}
}

// Stop stops the control plane; a nil Env (Start failed) is stopped.
func (e *Env) Stop() {
	if e != nil {
		Expect(e.Environment.Stop()).To(Succeed())
	}
}

// Namespace creates a fresh namespace, "<prefix>-<n>", and returns its name.
func (e *Env) Namespace(ctx context.Context) string {
	name := fmt.Sprintf("%s-%d", e.prefix, e.n.Add(1))
	Expect(e.Client.Create(ctx, &corev1.Namespace{ObjectMeta: api.ObjectMeta{Name: name}})).To(Succeed())
	return name
}

// Events returns the events about obj (matched by name and uid) as
// "Type/Reason: message".
func (e *Env) Events(ctx context.Context, obj api.Object) []string {
	var out []string
	for _, ev := range e.eventList(ctx, obj.GetNamespace()) {
		if ev.InvolvedObject.Name == obj.GetName() && ev.InvolvedObject.UID == obj.GetUID() {
			out = append(out, ev.Type+"/"+ev.Reason+": "+ev.Message)
		}
	}
	return out
}

// EventReasons returns the reasons of the events in ns about the object
// named name, of kind kind ("" for any).
func (e *Env) EventReasons(ctx context.Context, ns, kind, name string) []string {
	var out []string
	for _, ev := range e.eventList(ctx, ns) {
		if ev.InvolvedObject.Name == name && (kind == "" || ev.InvolvedObject.Kind == kind) {
			out = append(out, ev.Reason)
		}
	}
	return out
}

func (e *Env) eventList(ctx context.Context, ns string) []corev1.Event {
	l := &corev1.EventList{}
	Expect(e.Client.List(ctx, l, client.InNamespace(ns))).To(Succeed())
	return l.Items
}

// Manager is a controller manager a suite runs itself, to give a controller
// options the built-in set does not (a fake clock, short periods) or to
// restart it.
type Manager struct {
	stop context.CancelFunc
	done chan error
}

// StartManager starts a manager against the control plane (opts.Scheme
// defaults to e.Scheme) with the controllers setup adds. It runs until Stop.
func (e *Env) StartManager(opts manager.Options, setup func(*manager.Manager) error) *Manager {
	if opts.Scheme == nil {
		opts.Scheme = e.Scheme
	}
	mgr, err := manager.New(&client.Config{Host: e.URL}, opts)
	Expect(err).NotTo(HaveOccurred())
	Expect(setup(mgr)).To(Succeed())
	ctx, cancel := context.WithCancel(context.Background())
	m := &Manager{stop: cancel, done: make(chan error, 1)}
	go func() { m.done <- mgr.Start(ctx) }()
	return m
}

// Stop stops the manager and waits until it has (nil-safe): for the
// controller, a crash, nothing is flushed.
func (m *Manager) Stop() {
	if m == nil {
		return
	}
	m.stop()
	Eventually(m.done, 15*time.Second).Should(Receive(BeNil()))
}

// Gone returns a condition for Eventually: obj no longer exists on the
// server.
func (e *Env) Gone(ctx context.Context, obj api.Object) func() bool {
	return func() bool {
		return apierrors.IsNotFound(e.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj))
	}
}

// ApplyCRD creates the CustomResourceDefinition in file (YAML), unless it
// exists, and waits until it is Established.
func (e *Env) ApplyCRD(ctx context.Context, file string) {
	GinkgoHelper()
	data, err := os.ReadFile(file)
	Expect(err).NotTo(HaveOccurred())
	js, err := yaml.YAMLToJSON(data)
	Expect(err).NotTo(HaveOccurred())
	m, err := api.DecodeMap(js)
	Expect(err).NotTo(HaveOccurred())
	crd := &api.Unstructured{Object: m}
	if err := e.Client.Create(ctx, crd); !apierrors.IsAlreadyExists(err) {
		Expect(err).NotTo(HaveOccurred())
	}
	Eventually(func(g Gomega) {
		u := &api.Unstructured{Object: map[string]any{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition"}}
		u.SetName(crd.GetName())
		g.Expect(e.Client.Get(ctx, client.ObjectKeyFromObject(u), u)).To(Succeed())
		established := false
		for _, cond := range api.NestedSlice(u.Object, "status", "conditions") {
			cm, _ := cond.(map[string]any)
			if cm["type"] == "Established" && cm["status"] == "True" {
				established = true
			}
		}
		g.Expect(established).To(BeTrue())
	}).Should(Succeed())
}
