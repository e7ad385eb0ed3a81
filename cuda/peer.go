package cuda

// errorPeerAccessAlreadyEnabled is CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED:
// not a failure for EnablePeerAccess, which is idempotent.
const errorPeerAccessAlreadyEnabled Result = 704

// CanAccessPeer reports whether device d can read and write the memory of
// device peer directly (NVLink or PCIe peer-to-peer). A device is never
// its own peer in the driver's sense; callers copy within a device with
// CopyDeviceAsync.
func (d Device) CanAccessPeer(peer Device) (bool, error) {
	if err := load(); err != nil {
		return false, err
	}
	ok, r := drvCanAccessPeer(d.h, peer.h)
	if r != Success {
		return false, checkf("cuDeviceCanAccessPeer", r, "devices %d and %d", d.ordinal, peer.ordinal)
	}
	return ok, nil
}

// EnablePeerAccess lets work in c reach memory allocated in peer, which
// must be on another device that CanAccessPeer approves. Enabling twice
// is not an error.
func (c *Context) EnablePeerAccess(peer *Context) error {
	h, err := c.handle("cuCtxEnablePeerAccess")
	if err != nil {
		return err
	}
	ph, err := peer.handle("cuCtxEnablePeerAccess")
	if err != nil {
		return err
	}
	r := drvCtxEnablePeer(h, ph)
	if r == errorPeerAccessAlreadyEnabled {
		return nil
	}
	return checkf("cuCtxEnablePeerAccess", r, "device %d to device %d", c.dev.ordinal, peer.dev.ordinal)
}

// CopyPeerAsync copies n bytes from src (any context) to dst (any
// context) on stream s, which belongs to either side. Across devices
// with peer access enabled the copy goes directly over the link;
// otherwise the driver stages it.
func CopyPeerAsync(dst *Buffer, dstOff int64, src *Buffer, srcOff, n int64, s *Stream) error {
	dh, err := dst.live("cuMemcpyPeerAsync")
	if err != nil {
		return err
	}
	sh, err := src.live("cuMemcpyPeerAsync")
	if err != nil {
		return err
	}
	if err := dst.span("cuMemcpyPeerAsync", dstOff, n); err != nil {
		return err
	}
	if err := src.span("cuMemcpyPeerAsync", srcOff, n); err != nil || n == 0 {
		return err
	}
	if s == nil {
		return &Error{Op: "cuMemcpyPeerAsync", Code: ErrorInvalidValue, Detail: "nil stream"}
	}
	h, err := s.ctx.handle("cuMemcpyPeerAsync")
	if err != nil {
		return err
	}
	r := drvMemcpyPeerAsync(h, dst.ptr+uint64(dstOff), dh, src.ptr+uint64(srcOff), sh, n, s.handle())
	return checkf("cuMemcpyPeerAsync", r, "%s from device %d to device %d", FormatBytes(n), src.ctx.dev.ordinal, dst.ctx.dev.ordinal)
}

// WaitEvent makes later work on s wait until e's recorded point is
// reached; e may belong to another context or device.
func (s *Stream) WaitEvent(e *Event) error {
	if s == nil || e == nil {
		return &Error{Op: "cuStreamWaitEvent", Code: ErrorInvalidValue, Detail: "nil stream or event"}
	}
	h, err := s.ctx.handle("cuStreamWaitEvent")
	if err != nil {
		return err
	}
	if _, err := e.ctx.handle("cuStreamWaitEvent"); err != nil {
		return err
	}
	return checkf("cuStreamWaitEvent", drvStreamWaitEvent(h, s.handle(), e.h), "stream on device %d", s.ctx.dev.ordinal)
}

// Context returns the stream's context.
func (s *Stream) Context() *Context { return s.ctx }
