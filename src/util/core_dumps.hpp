// Keeping secrets out of core dumps. SecretBytes already live in memory marked
// MADV_DONTDUMP, but copies paes does not control also hold key material:
// OpenSSL's expanded key schedules (whose first round key is the key itself),
// the GPU engines' host-side round keys, command-line strings. So the tool
// makes the whole process non-dumpable, as ssh-agent and gpg-agent do.
#pragma once

namespace paes {

// Turns core dumps off for this process (prctl PR_SET_DUMPABLE 0), which also
// keeps other processes of the same user from attaching to it with ptrace.
// Returns false, changing nothing, where the system does not support it.
bool forbid_core_dumps() noexcept;

}  // namespace paes
