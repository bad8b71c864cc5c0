// Command testbin is the static program the containerd runtime's tests pack
// into an image. The first argument selects what it does:
//
//	echo ARGS...      print each argument on its own line to stdout
//	stderr ARGS...    print each argument on its own line to stderr
//	greet             print "out: hello" to stdout, "err: oops" to stderr, exit 3
//	exit N            exit with code N
//	serve             print "ready", then wait; on SIGTERM print "got SIGTERM" and exit 0
//	ignore-term       print "ready", ignore SIGTERM, wait forever
//	env               print the environment
//	id                print "uid=U gid=G"
//	pwd               print the working directory
//	cat FILE          print a file
//	alloc MIB         allocate and touch MIB mebibytes, then print "survived"
//	stdin             copy stdin to stdout until end of file
//	tty               print "tty ROWS COLS" when stdin is a terminal, else exit 1
//	ttylines          for each line read from stdin print "got LINE ROWS COLS" (the terminal's size)
//	pidns             print the PID namespace (the link /proc/self/ns/pid)
//	hostname          print the host name
package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"unsafe"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: testbin MODE [ARGS]")
		os.Exit(2)
	}
	args := os.Args[2:]
	switch os.Args[1] {
	case "echo":
		for _, a := range args {
			fmt.Println(a)
		}
	case "stderr":
		for _, a := range args {
			fmt.Fprintln(os.Stderr, a)
		}
	case "greet":
		fmt.Println("out: hello")
		fmt.Fprintln(os.Stderr, "err: oops")
		os.Exit(3)
	case "exit":
		n, _ := strconv.Atoi(args[0])
		os.Exit(n)
	case "serve":
		ch := make(chan os.Signal, 1)
		signal.Notify(ch, syscall.SIGTERM)
		fmt.Println("ready")
		<-ch
		fmt.Println("got SIGTERM")
	case "ignore-term":
		signal.Ignore(syscall.SIGTERM)
		fmt.Println("ready")
		select {}
	case "env":
		for _, e := range os.Environ() {
			fmt.Println(e)
		}
	case "id":
		fmt.Printf("uid=%d gid=%d\n", os.Getuid(), os.Getgid())
	case "pwd":
		wd, _ := os.Getwd()
		fmt.Println(wd)
	case "cat":
		b, err := os.ReadFile(args[0])
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Stdout.Write(b)
	case "alloc":
		n, _ := strconv.Atoi(args[0])
		var keep [][]byte
		for i := 0; i < n; i++ {
			b := make([]byte, 1<<20)
			for j := range b {
				b[j] = byte(j)
			}
			keep = append(keep, b)
		}
		fmt.Println("survived", len(keep))
	case "stdin": // copy stdin to stdout until end of file
		_, _ = io.Copy(os.Stdout, os.Stdin)
	case "tty": // is stdin a terminal, and its size
		var ws struct{ Row, Col, X, Y uint16 }
		if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, os.Stdin.Fd(), syscall.TIOCGWINSZ, uintptr(unsafe.Pointer(&ws))); e != 0 {
			fmt.Println("not a tty")
			os.Exit(1)
		}
		fmt.Printf("tty %d %d\n", ws.Row, ws.Col)
	case "ttylines":
		r := bufio.NewScanner(os.Stdin)
		for r.Scan() {
			var ws struct{ Row, Col, X, Y uint16 }
			_, _, _ = syscall.Syscall(syscall.SYS_IOCTL, os.Stdin.Fd(), syscall.TIOCGWINSZ, uintptr(unsafe.Pointer(&ws)))
			fmt.Printf("got %s %d %d\n", r.Text(), ws.Row, ws.Col)
		}
		fmt.Println("eof")
		select {}
	case "pidns":
		ns, err := os.Readlink("/proc/self/ns/pid")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Println(ns)
	case "hostname":
		h, _ := os.Hostname()
		fmt.Println(h)
	default:
		fmt.Fprintln(os.Stderr, "unknown mode", os.Args[1])
		os.Exit(2)
	}
}
