//go:build !cgo

package cuda

import "unsafe"

// Without cgo there is no way to call the driver: every entry point fails
// and Available says why. The handles are plain integers that stay zero.
type (
	ctxHandle    = uintptr
	modHandle    = uintptr
	fnHandle     = uintptr
	streamHandle = uintptr
	eventHandle  = uintptr
)

const haveCgo = false

func drvLoad() error {
	return errorString("this binary was built without cgo (CGO_ENABLED=0), so it cannot call the CUDA driver")
}

const notLoaded = resultNotLoaded

func drvInit() Result                                            { return notLoaded }
func drvDriverVersion() (int, Result)                            { return 0, notLoaded }
func drvDeviceCount() (int, Result)                              { return 0, notLoaded }
func drvDeviceGet(int) (int32, Result)                           { return 0, notLoaded }
func drvDeviceName(int32) (string, Result)                       { return "", notLoaded }
func drvDeviceAttribute(DeviceAttribute, int32) (int, Result)    { return 0, notLoaded }
func drvDeviceTotalMem(int32) (int64, Result)                    { return 0, notLoaded }
func drvPrimaryRetain(int32) (ctxHandle, Result)                 { return 0, notLoaded }
func drvPrimaryRelease(int32) Result                             { return notLoaded }
func drvPrimaryReset(int32) Result                               { return notLoaded }
func drvErrorName(Result) string                                 { return "" }
func drvErrorString(Result) string                               { return "" }
func ctxToRaw(c ctxHandle) uintptr                               { return c }
func ctxFromRaw(u uintptr) ctxHandle                             { return u }
func streamToRaw(s streamHandle) uintptr                         { return s }
func streamFromRaw(u uintptr) streamHandle                       { return u }
func drvCtxSynchronize(ctxHandle) Result                         { return notLoaded }
func drvCtxDevice(ctxHandle) (int32, Result)                     { return 0, notLoaded }
func drvMemInfo(ctxHandle) (int64, int64, Result)                { return 0, 0, notLoaded }
func drvMemAlloc(ctxHandle, int64) (uint64, Result)              { return 0, notLoaded }
func drvMemFree(ctxHandle, uint64) Result                        { return notLoaded }
func drvMemRange(ctxHandle, uint64) (uint64, int64, Result)      { return 0, 0, notLoaded }
func drvPointerContext(uint64) (ctxHandle, Result)               { return 0, notLoaded }
func drvMemAllocHost(ctxHandle, int64) (unsafe.Pointer, Result)  { return nil, notLoaded }
func drvMemFreeHost(ctxHandle, unsafe.Pointer) Result            { return notLoaded }
func drvMemHostRegister(ctxHandle, unsafe.Pointer, int64) Result { return notLoaded }
func drvMemHostUnregister(ctxHandle, unsafe.Pointer) Result      { return notLoaded }
func drvMemcpyHtoD(ctxHandle, uint64, unsafe.Pointer, int64, streamHandle, bool) Result {
	return notLoaded
}
func drvMemcpyDtoH(ctxHandle, unsafe.Pointer, uint64, int64, streamHandle, bool) Result {
	return notLoaded
}
func drvMemcpyDtoD(ctxHandle, uint64, uint64, int64, streamHandle, bool) Result { return notLoaded }
func drvMemsetD8(ctxHandle, uint64, uint8, int64, streamHandle) Result          { return notLoaded }
func drvMemsetD32(ctxHandle, uint64, uint32, int64, streamHandle) Result        { return notLoaded }
func drvStreamCreate(ctxHandle, uint32) (streamHandle, Result)                  { return 0, notLoaded }
func drvStreamDestroy(ctxHandle, streamHandle) Result                           { return notLoaded }
func drvStreamSynchronize(ctxHandle, streamHandle) Result                       { return notLoaded }
func drvEventCreate(ctxHandle, uint32) (eventHandle, Result)                    { return 0, notLoaded }
func drvEventDestroy(ctxHandle, eventHandle) Result                             { return notLoaded }
func drvEventRecord(ctxHandle, eventHandle, streamHandle) Result                { return notLoaded }
func drvEventSynchronize(ctxHandle, eventHandle) Result                         { return notLoaded }
func drvEventQuery(ctxHandle, eventHandle) Result                               { return notLoaded }
func drvEventElapsed(ctxHandle, eventHandle, eventHandle) (float32, Result)     { return 0, notLoaded }
func drvModuleLoad(ctxHandle, []byte) (modHandle, string, Result)               { return 0, "", notLoaded }
func drvModuleUnload(ctxHandle, modHandle) Result                               { return notLoaded }
func drvModuleFunction(ctxHandle, modHandle, string) (fnHandle, Result)         { return 0, notLoaded }
func drvFuncAttribute(ctxHandle, FuncAttribute, fnHandle) (int, Result)         { return 0, notLoaded }
func drvOccupancy(ctxHandle, fnHandle, int, int) (int, Result)                  { return 0, notLoaded }
func drvLaunch(ctxHandle, fnHandle, Dim3, Dim3, int, streamHandle, []uint64, bool, bool) Result {
	return notLoaded
}

func drvCanAccessPeer(int32, int32) (bool, Result)                   { return false, notLoaded }
func drvCtxEnablePeer(ctxHandle, ctxHandle) Result                   { return notLoaded }
func drvStreamWaitEvent(ctxHandle, streamHandle, eventHandle) Result { return notLoaded }
func drvMemcpyPeerAsync(ctxHandle, uint64, ctxHandle, uint64, ctxHandle, int64, streamHandle) Result {
	return notLoaded
}
