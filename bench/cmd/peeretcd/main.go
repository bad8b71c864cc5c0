// Command peeretcd runs an etcd server from go.etcd.io/etcd/server/v3/embed
// with the settings of Converge's embedded etcd (it calls the same
// framework/storage/etcd.StartEmbedded that `converge up` calls: same WAL,
// fsync and disk snapshots, and the same in-memory raft log retention:
// -snapshot-catchup-entries 5000 gives etcd's own default, as an etcd under
// kube-apiserver runs), in its own process, so that kube-apiserver in the peer benchmark (bench/peer) stores on
// the same kind of etcd as Converge and its CPU and memory can be measured
// apart. It prints the client URL on stdout and runs until SIGTERM or SIGINT.
//
//	peeretcd -data-dir /tmp/etcd -port 23790
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	etcdstore "github.com/converge-dev/converge/framework/storage/etcd"
)

func main() {
	dir := flag.String("data-dir", "", "etcd data directory (required)")
	port := flag.Int("port", 0, "127.0.0.1 client port (0: a free one)")
	noFsync := flag.Bool("unsafe-no-fsync", false, "disable fsync, as Converge's NoFsync")
	catchUp := flag.Uint64("snapshot-catchup-entries", etcdstore.DefaultCatchUpEntries,
		"raft entries kept in memory after a snapshot (Converge's single member keeps "+fmt.Sprint(etcdstore.DefaultCatchUpEntries)+")")
	flag.Parse()
	if err := run(*dir, *port, *noFsync, *catchUp); err != nil {
		fmt.Fprintln(os.Stderr, "peeretcd:", err)
		os.Exit(1)
	}
}

func run(dir string, port int, noFsync bool, catchUp uint64) error {
	if dir == "" {
		return fmt.Errorf("-data-dir is required")
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	e, err := etcdstore.StartEmbedded(ctx, etcdstore.EmbeddedOptions{Dir: dir, ClientPort: port, NoFsync: noFsync,
		CatchUpEntries: catchUp})
	if err != nil {
		return fmt.Errorf("start embedded etcd in %s: %w", dir, err)
	}
	defer e.Close()
	fmt.Println(e.Endpoints()[0])
	select {
	case <-ctx.Done():
		return nil
	case err := <-e.Err():
		return fmt.Errorf("etcd stopped: %w", err)
	}
}
