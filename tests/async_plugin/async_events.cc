// The asynchronous test device: events and cross-stream waits.
#include "async_device.h"

#include <algorithm>
#include <new>

namespace plexus::async_device {

// ---------------------------------------------------------------------------
// Events
// ---------------------------------------------------------------------------

// Each record is a generation; a wait is for the generation recorded last
// when it was asked for, not for any later one (an event recorded again on
// a faster stream must not release it), as CUDA's events behave.
struct EventState {
  struct Outcome {
    PX_Code code = PX_CODE_OK;
    std::string message;
  };
  std::mutex mu;
  std::condition_variable cv;
  uint64_t recorded = 0;
  std::map<uint64_t, Outcome> done;  // the last kKeep generations finished
  static constexpr uint64_t kKeep = 1024;
  // With mu held.
  bool Finished(uint64_t generation) const {
    return generation == 0 || generation + kKeep <= recorded || done.count(generation) > 0;
  }
  Outcome OutcomeOf(uint64_t generation) const {
    auto it = done.find(generation);
    return it == done.end() ? Outcome{} : it->second;
  }
};
// Work queued on a stream may outlive the event it records.
struct Event {
  std::shared_ptr<EventState> state = std::make_shared<EventState>();
};

PX_Status* EventCreate(PX_Device*, PX_Event** out) {
  auto* e = new (std::nothrow) Event();
  if (e == nullptr) return Error(PX_CODE_RESOURCE_EXHAUSTED, "out of host memory");
  *out = reinterpret_cast<PX_Event*>(e);
  return nullptr;
}

void EventDestroy(PX_Device*, PX_Event* e) { delete reinterpret_cast<Event*>(e); }

PX_Status* EventRecord(PX_Device*, PX_Stream* s, PX_Event* e) {
  std::shared_ptr<EventState> state = reinterpret_cast<Event*>(e)->state;
  uint64_t generation;
  {
    std::lock_guard<std::mutex> lock(state->mu);
    generation = ++state->recorded;
  }
  StreamOf(s)->Enqueue([state, generation](Stream& stream) -> PX_Status* {
    PX_Status* error = stream.ErrorStatus();
    {
      std::lock_guard<std::mutex> lock(state->mu);
      EventState::Outcome& outcome = state->done[generation];
      outcome.code = error ? g_plugin->real->status_code(error) : PX_CODE_OK;
      outcome.message = error ? g_plugin->real->status_message(error) : "";
      while (!state->done.empty() && state->done.begin()->first + EventState::kKeep <= state->recorded) {
        state->done.erase(state->done.begin());
      }
    }
    if (error != nullptr) g_plugin->real->status_destroy(error);
    state->cv.notify_all();
    return nullptr;
  }, Stream::Kind::kControl);
  return nullptr;
}

PX_Status* EventSynchronize(PX_Device* d, PX_Event* e) {
  EventState& state = *reinterpret_cast<Event*>(e)->state;
  std::unique_lock<std::mutex> lock(state.mu);
  const uint64_t target = state.recorded;
  if (!state.cv.wait_for(lock, g_plugin->deadline, [&] { return state.Finished(target); })) {
    return Error(PX_CODE_DEADLINE_EXCEEDED, "%s: an event did not complete within %lld s",
                 DeviceOf(d)->name.c_str(), static_cast<long long>(g_plugin->deadline.count()));
  }
  const EventState::Outcome outcome = state.OutcomeOf(target);
  if (outcome.code == PX_CODE_OK) return nullptr;
  return g_plugin->real->status_create(outcome.code, outcome.message.c_str());
}

PX_Status* StreamWaitEvent(PX_Device* d, PX_Stream* s, PX_Event* e) {
  std::shared_ptr<EventState> state = reinterpret_cast<Event*>(e)->state;
  uint64_t target;
  {
    std::lock_guard<std::mutex> lock(state->mu);
    target = state->recorded;
  }
  const std::string device = DeviceOf(d)->name;
  StreamOf(s)->Enqueue([state, target, device](Stream&) -> PX_Status* {
    std::unique_lock<std::mutex> lock(state->mu);
    if (!state->cv.wait_for(lock, g_plugin->deadline, [&] { return state->Finished(target); })) {
      return Error(PX_CODE_DEADLINE_EXCEEDED, "%s: a stream waited more than %lld s for an event",
                   device.c_str(), static_cast<long long>(g_plugin->deadline.count()));
    }
    return nullptr;
  }, Stream::Kind::kControl);
  return nullptr;
}

}  // namespace plexus::async_device
