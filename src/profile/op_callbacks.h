// Private to the tracer: the RecordFunction callbacks that record ops and autograd nodes into the
// calling thread's buffer (thread_buffer.h), registered by the tracer and by its calibration.
#pragma once

#include <memory>

namespace at {
struct ObserverContext;
struct RecordFunction;
}  // namespace at

namespace llmprof::profile::detail {

struct ThreadBuffer;

// Start of an observed call: a timed OpEvent, or an untimed view call counted.
std::unique_ptr<at::ObserverContext> on_start(const at::RecordFunction& fn);
// End of an observed call: the event's end time and its parent's child time.
void on_end(const at::RecordFunction& fn, at::ObserverContext* ctx);
// This thread's buffer; the first event of a thread in a window claims one (the loop's thread
// claims slot 0 when the window starts). Null once every slot is taken.
ThreadBuffer* claim_buffer();

}  // namespace llmprof::profile::detail
