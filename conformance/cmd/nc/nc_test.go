package main

import (
	"bufio"
	"bytes"
	"net"
	"strconv"
	"strings"
	"testing"
)

func TestNC(t *testing.T) {
	t.Parallel()
	// A TCP server answering one line with its upper case, then closing;
	// a UDP server answering each datagram likewise.
	tl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tl.Close() })
	go func() {
		for {
			c, err := tl.Accept()
			if err != nil {
				return
			}
			line, _ := bufio.NewReader(c).ReadString('\n')
			_, _ = c.Write([]byte(strings.ToUpper(line)))
			c.Close()
		}
	}()
	ul, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ul.Close() })
	go func() {
		buf := make([]byte, 1500)
		for {
			n, addr, err := ul.ReadFrom(buf)
			if err != nil {
				return
			}
			_, _ = ul.WriteTo([]byte(strings.ToUpper(string(buf[:n]))+"from "+strconv.Itoa(addr.(*net.UDPAddr).Port)), addr)
		}
	}()
	refused, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedPort := strconv.Itoa(refused.Addr().(*net.TCPAddr).Port)
	refused.Close()
	tcpPort := strconv.Itoa(tl.Addr().(*net.TCPAddr).Port)
	udpPort := strconv.Itoa(ul.LocalAddr().(*net.UDPAddr).Port)

	for _, c := range []struct {
		name      string
		args      []string
		code      int
		out, errs string
	}{
		{"tcp, verbose", []string{"-v", "-t", "-w", "2", "127.0.0.1", tcpPort}, 0, "HOSTNAME\n", "Connection to 127.0.0.1 " + tcpPort + " port [tcp/*] succeeded!\n"},
		{"udp with a wait", []string{"-w", "1", "-u", "127.0.0.1", udpPort}, 0, "HOSTNAME\nfrom ", ""},
		{"udp from a local port", []string{"-u", "-w", "1", "-p", "0", "127.0.0.1", udpPort}, 0, "HOSTNAME\nfrom ", ""},
		{"refused", []string{"-w", "1", "127.0.0.1", closedPort}, 1, "", "nc: connect to 127.0.0.1 port " + closedPort + " (tcp) failed: connection refused\n"},
		{"zero I/O", []string{"-vz", "-w", "1", "127.0.0.1", tcpPort}, 0, "", "Connection to 127.0.0.1 " + tcpPort + " port [tcp/*] succeeded!\n"},
		{"no port", []string{"-u", "127.0.0.1"}, 1, "", "nc: a host and a port are required"},
		{"bad option", []string{"-Q", "127.0.0.1", tcpPort}, 1, "", "nc: invalid option -- 'Q'"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var out, errs bytes.Buffer
			code := run(c.args, strings.NewReader("hostName\n"), &out, &errs)
			if code != c.code || !strings.HasPrefix(out.String(), c.out) || !strings.HasPrefix(errs.String(), c.errs) {
				t.Errorf("nc %q = %d, %q, %q; want %d, %q…, %q…", c.args, code, out.String(), errs.String(), c.code, c.out, c.errs)
			}
		})
	}
}
