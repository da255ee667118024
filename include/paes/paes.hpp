// Umbrella header of libpaes.
#pragma once

#include "paes/cipher.hpp"
#include "paes/engine.hpp"
#include "paes/error.hpp"
#include "paes/io.hpp"
#include "paes/mode.hpp"
#include "paes/plan.hpp"
#include "paes/secret.hpp"
#include "paes/transform.hpp"
