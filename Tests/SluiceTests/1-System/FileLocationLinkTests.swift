import CSluiceShims
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
@testable import Sluice
import SluiceTestSupport
import Testing

/// An unnamed (`O_TMPFILE`) file gets its name by its descriptor where the kernel allows it,
/// and through `/proc/self/fd` where it does not.
/// Serialized: the tests set and read the process-wide choice of the first call.
@Suite(.serialized) struct FileLocationLinkTests {
    /// The kernel refuses `AT_EMPTY_PATH` (`ENOENT`, as Linux without `CAP_DAC_READ_SEARCH`;
    /// `EPERM`, as a sandbox might): the first file is named through `/proc`, and the next goes
    /// there at once.
    @Test(arguments: [ErrorNumber.noSuchFileOrDirectory, .notPermitted])
    func aRefusedLinkByDescriptorFallsBackToProc(refusal: ErrorNumber) async throws {
        try await withScratchDirectory { scratch in
            let handle = try DirectoryHandle.open(scratch.path)
            let calls = LockedValue<[String]>([])
            var system = SystemCalls.live
            let live = system.linkAt
            system.linkAt = { fromDirectory, from, toDirectory, to, flags in
                let byDescriptor = flags & CSluiceShims_AT_EMPTY_PATH != 0
                calls.withLock { $0.append(byDescriptor ? "descriptor" : String(cString: from)) }
                if byDescriptor { return .failure(refusal) }
                return live(fromDirectory, from, toDirectory, to, flags)
            }
            FileLocation.linksByDescriptor.store(true, ordering: .relaxed)
            defer { FileLocation.linksByDescriptor.store(true, ordering: .relaxed) }
            var expected = ["descriptor"]
            for (name, byte) in [("a", UInt8(1)), ("b", 2)] {
                let file = try FileLocation(name: ".", in: handle).open(O_RDWR | CSluiceShims_O_TMPFILE, permissions: 0o600, system: .live)
                defer { try? file.close() }
                #expect([byte].withUnsafeBytes { Glibc.write(file.rawValue, $0.baseAddress, 1) } == 1)
                try FileLocation(name: Pathname(name), in: handle).link(descriptor: file, system: system).get()
                expected.append("/proc/self/fd/\(file.rawValue)")
                #expect(try readFile(scratch.appending(Pathname(name))) == [byte])
            }
            #expect(calls.withLock { $0 } == expected)
        }
    }

    /// Where the kernel allows it (as root), the file is named by its descriptor alone.
    @Test func aFileIsNamedByItsDescriptorWhereAllowed() async throws {
        try await withScratchDirectory { scratch in
            let handle = try DirectoryHandle.open(scratch.path)
            let file = try FileLocation(name: ".", in: handle).open(O_RDWR | CSluiceShims_O_TMPFILE, permissions: 0o600, system: .live)
            defer { try? file.close() }
            let allowed = "".withCString { linkat(file.rawValue, $0, handle.descriptor.rawValue, "probe", CSluiceShims_AT_EMPTY_PATH) } == 0
            try #require(allowed, "linkat(AT_EMPTY_PATH) is refused here (no CAP_DAC_READ_SEARCH): the fallback test covers it")
            let other = try FileLocation(name: ".", in: handle).open(O_RDWR | CSluiceShims_O_TMPFILE, permissions: 0o600, system: .live)
            defer { try? other.close() }
            let calls = LockedValue<[CInt]>([])
            var system = SystemCalls.live
            let live = system.linkAt
            system.linkAt = { fromDirectory, from, toDirectory, to, flags in
                calls.withLock { $0.append(flags) }
                return live(fromDirectory, from, toDirectory, to, flags)
            }
            try FileLocation(name: "named", in: handle).link(descriptor: other, system: system).get()
            #expect(try handle.status(of: "named").kind == .regular)
            #expect(calls.withLock { $0 } == [CSluiceShims_AT_EMPTY_PATH])
        }
    }
}
