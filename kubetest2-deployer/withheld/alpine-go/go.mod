// A stand-in for gitlab.alpinelinux.org/alpine/go, which the Go module
// proxy here withholds (403 for every version). See repository/stub.go.
module gitlab.alpinelinux.org/alpine/go

go 1.21
