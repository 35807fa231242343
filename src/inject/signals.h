// SIGINT and SIGTERM: records reach the file before the host program's own handler runs or the
// default action ends the process. The handler only wakes the session's flusher thread and waits
// for it (bounded), then hands the signal on to whatever disposition was there before.
#pragma once

namespace gpuscope::inject {

class Session;

// Installs the handlers once per process, over a handler or the default action (an ignored
// signal stays ignored). A program that installs its own handler later replaces ours; the
// periodic flush still bounds what is lost.
void install_signal_handlers(Session* session) noexcept;

// The flusher's side: a signal waiting to be handled (0 if none), and its completion.
int take_signal_request() noexcept;
void signal_request_done(int sig) noexcept;

// Whether `sig` ends the process once handed on (the disposition before ours was the default).
bool signal_is_fatal(int sig) noexcept;

}  // namespace gpuscope::inject
