// Umbrella header of libpaes: the whole public API in one include.
//   sealed.hpp     the default format: authenticated, streaming (run_sealed)
//   transform.hpp  raw modes, byte-identical to openssl enc (transform_file,
//                  transform_salted, transform_memory)
//   the rest       the vocabulary those take: modes and specs, keys, engines,
//                  jobs and plans, inputs and outputs, errors
#pragma once

#include "paes/age_keys.hpp"
#include "paes/armor.hpp"
#include "paes/backend.hpp"
#include "paes/backend_choice.hpp"
#include "paes/cipher.hpp"
#include "paes/data_set.hpp"
#include "paes/endpoint.hpp"
#include "paes/engine.hpp"
#include "paes/error.hpp"
#include "paes/foreign_format.hpp"
#include "paes/inspect.hpp"
#include "paes/io.hpp"
#include "paes/job.hpp"
#include "paes/mode.hpp"
#include "paes/notice.hpp"
#include "paes/plan.hpp"
#include "paes/recipient.hpp"
#include "paes/sealed.hpp"
#include "paes/secret.hpp"
#include "paes/transform.hpp"
#include "paes/x25519_key.hpp"

// MpiSession is in the mpi engine's library, built where MPI was found; its
// users (CMake's paes::paes_mpi) get PAES_HAVE_MPI defined.
#ifdef PAES_HAVE_MPI
#include "paes/mpi.hpp"
#endif
