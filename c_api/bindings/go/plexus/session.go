package plexus

/*
#include <stdlib.h>
#include "plexus/c_api.h"
*/
import "C"

import (
	"runtime"
	"sort"
)

// Session runs a graph on one device (px_session).
type Session struct {
	c       *C.px_session
	runtime *Runtime
}

// NewSession opens a session on device ("" for the best device present).
// The session keeps what it needs of the graph.
func NewSession(r *Runtime, g *Graph, device string) (*Session, error) {
	var cs cstrings
	defer cs.free()
	d := cs.optional(device)
	var out *C.px_session
	if err := call(func(s *C.px_status) C.px_code { return C.px_session_create(r.c, g.c, d, &out, s) }); err != nil {
		return nil, err
	}
	runtime.KeepAlive(g)
	sess := &Session{out, r}
	runtime.SetFinalizer(sess, (*Session).Close)
	return sess, nil
}

// Close destroys the session.
func (sess *Session) Close() {
	if sess != nil && sess.c != nil {
		C.px_session_destroy(sess.c)
		sess.c = nil
	}
}

// Device is the device the session runs on.
func (sess *Session) Device() string { return C.GoString(C.px_session_device_name(sess.c)) }

// Run feeds tensors by name ("node" or "node:k"), runs targets for their
// effects and returns the fetches in order (host tensors).
func (sess *Session) Run(feeds map[string]*Tensor, fetches []string, targets []string) ([]*Tensor, error) {
	var cs cstrings
	defer cs.free()
	names := make([]string, 0, len(feeds))
	for name := range feeds {
		names = append(names, name)
	}
	sort.Strings(names)
	values := make([]*Tensor, len(names))
	for i, name := range names {
		values[i] = feeds[name]
	}
	feedHandles := handles(values)
	out := make([]*C.px_tensor, len(fetches))
	fp, fetchp, tp := cs.array(names), cs.array(fetches), cs.array(targets)
	err := call(func(s *C.px_status) C.px_code {
		return C.px_session_run(sess.c, fp, firstTensor(feedHandles), C.size_t(len(names)), fetchp,
			C.size_t(len(fetches)), tp, C.size_t(len(targets)), firstTensor(out), s)
	})
	runtime.KeepAlive(values)
	if err != nil {
		return nil, err
	}
	return wrapAll(out), nil
}
