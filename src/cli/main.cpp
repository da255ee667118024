// paes: parallel AES for bulk data. main() wires the subcommands and turns
// every failure into one line on stderr and an exit status: 0 success,
// 1 a failed operation, 2 a usage error.
#include <cstdio>
#include <iostream>
#include <new>

#include "cli/commands.hpp"
#include "paes/error.hpp"

namespace {

constexpr const char* kFooter = R"(Examples:
  paes encrypt --mode ctr --key-file aes.key --iv 000102030405060708090a0b0c0d0e0f data.bin -o data.ctr
  paes decrypt --mode ctr --key-file aes.key --iv 000102030405060708090a0b0c0d0e0f data.ctr -o data.bin
  paes encrypt --mode cbc --key-file aes.key --iv "$IV" --threads 4 backup.tar -o backup.tar.cbc
  paes info
  paes bench --size 256M --modes ctr,cbc

Every raw mode gives exactly the bytes of
  openssl enc [-d] -aes-<bits>-<mode> -K <key hex> -iv <iv hex> [-nopad]
whatever the engine, thread count or chunk size.

Exit status: 0 success, 1 a failed operation (bad input data, I/O error,
bad decrypt), 2 a usage error. Errors are one line on stderr.
Run 'paes <command> --help' for each command's options.)";

int fail(const std::string& message, int status) {
  std::fflush(stdout);
  std::cerr << "paes: " << message << '\n';
  return status;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"paes: parallel AES for bulk data, byte-identical to openssl enc", "paes"};
  app.footer(kFooter);
  app.require_subcommand(1);
  app.set_version_flag("--version", "paes 0.1.0");

  paes::cli::TransformArgs encrypt_args, decrypt_args;
  paes::cli::BenchArgs bench_args;
  paes::cli::InfoArgs info_args;
  paes::cli::KeygenArgs keygen_args;
  CLI::App* encrypt = add_transform_command(app, paes::Direction::encrypt, encrypt_args);
  CLI::App* decrypt = add_transform_command(app, paes::Direction::decrypt, decrypt_args);
  CLI::App* bench = add_bench_command(app, bench_args);
  CLI::App* info = add_info_command(app, info_args);
  CLI::App* keygen = add_keygen_command(app, keygen_args);

  try {
    try {
      app.parse(argc, argv);
    } catch (const CLI::Success& e) {  // --help, --version
      return app.exit(e);
    } catch (const CLI::ParseError& e) {
      std::string message = e.what();
      for (CLI::App* sub : app.get_subcommands()) {
        message += " (see 'paes " + sub->get_name() + " --help')";
      }
      if (app.get_subcommands().empty()) message += " (see 'paes --help')";
      return fail(message, 2);
    }
    if (encrypt->parsed()) return run_transform(paes::Direction::encrypt, encrypt_args, *encrypt);
    if (decrypt->parsed()) return run_transform(paes::Direction::decrypt, decrypt_args, *decrypt);
    if (bench->parsed()) return run_bench(bench_args);
    if (info->parsed()) return run_info(info_args);
    if (keygen->parsed()) return run_keygen(keygen_args);
    return fail("no command given (see 'paes --help')", 2);
  } catch (const paes::Error& e) {
    return fail(e.what(), e.kind() == paes::ErrorKind::usage ? 2 : 1);
  } catch (const std::bad_alloc&) {
    return fail("out of memory", 1);
  } catch (const std::exception& e) {
    return fail(e.what(), 1);
  }
}
