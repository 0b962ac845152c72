/*
Copyright 2026 The Kubernetes Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package model

import (
	"errors"
	"fmt"
	"syscall"
)

// Kind is what went wrong in a model operation, in the cloud's terms.
// The model says what failed; each front says it in its own API's words
// (a status and code of its own, often a message of its own), so one
// failure reads as the real API would put it whichever front was called.
type Kind int

const (
	// KindInternal is a failure of fakecloud itself.
	KindInternal Kind = iota
	// KindInvalid is a request the cloud refuses as malformed or not allowed.
	KindInvalid
	// KindNotFound is a reference to an object the cloud does not have.
	KindNotFound
	// KindConflict is a request at odds with the cloud's state: a name
	// taken, an address in use, an object owned by another dialect.
	KindConflict
	// KindPrecondition is a change that asked for an object to exist
	// (a replace) and found none.
	KindPrecondition
	// KindUnavailable is a change refused because the cloud is shutting down.
	KindUnavailable
	// KindSave is a change made in memory that the state file did not
	// take: the caller must hear that the file no longer matches.
	KindSave
)

// Error is a model operation's failure: its Kind for the front to answer,
// and the model's own words.
type Error struct {
	Kind Kind
	Msg  string
	// Err is the cause, when another error is one.
	Err error
}

func (e *Error) Error() string {
	if e.Msg == "" && e.Err != nil {
		return e.Err.Error()
	}
	return e.Msg
}

func (e *Error) Unwrap() error { return e.Err }

// Errorf is a failure of kind k.
func Errorf(k Kind, format string, args ...any) *Error {
	return &Error{Kind: k, Msg: fmt.Sprintf(format, args...)}
}

// KindOf is err's Kind; KindInternal for an error the model did not make.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return KindInternal
}

// saveFailed is what a change whose state write failed returns.
func saveFailed(err error) error {
	if err == nil {
		return nil
	}
	return &Error{Kind: KindSave, Err: err}
}

// dataplaneFailed is what a change the sockets refused returns: a port
// taken by someone else is a conflict the caller can resolve, a cloud
// shutting down is unavailable, anything else is ours.
func dataplaneFailed(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, syscall.EADDRINUSE):
		return &Error{Kind: KindConflict, Err: err}
	case errors.Is(err, ErrDataplaneClosed):
		return &Error{Kind: KindUnavailable, Err: err}
	default:
		return &Error{Kind: KindInternal, Err: err}
	}
}
