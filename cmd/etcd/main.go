// Command etcd is the etcd server at the version pinned in go.mod.
//
// go.etcd.io/etcd/server/v3 ships no main package, so the harness builds etcd
// from this one instead of downloading a release binary: the Go module proxy is
// the only source of code it may use.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
