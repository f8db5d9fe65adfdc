#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Testing
@testable import Sluice

/// ``SystemCalls`` shares its functions between copies, and stays a value: a function replaced
/// in one copy is replaced in that copy alone.
@Suite struct SystemCallsTests {
    /// What `fsync` of descriptor -1 reports through `calls`: `EBADF` from the kernel, or what
    /// a replacement says.
    static func fsyncOfNoDescriptor(_ calls: SystemCalls) -> CInt? {
        if case .failure(let error) = calls.fsync(-1) { return error.rawValue }
        return nil
    }

    @Test func replacingAFunctionInACopyLeavesTheOriginal() {
        let original = SystemCalls.live
        var copy = original
        copy.fsync = { _ in .failure(ErrorNumber(rawValue: EIO)) }
        #expect(Self.fsyncOfNoDescriptor(copy) == EIO)
        #expect(Self.fsyncOfNoDescriptor(original) == EBADF)
        #expect(Self.fsyncOfNoDescriptor(SystemCalls.live) == EBADF)
    }

    @Test func aCopyMadeAfterAReplacementKeepsItWhenTheFirstChangesAgain() {
        var first = SystemCalls.live
        first.fsync = { _ in .failure(ErrorNumber(rawValue: EIO)) }
        let second = first
        first.fsync = { _ in .failure(ErrorNumber(rawValue: ENOSPC)) }
        #expect(Self.fsyncOfNoDescriptor(first) == ENOSPC)
        #expect(Self.fsyncOfNoDescriptor(second) == EIO)
    }

    @Test func theInitializersWritevGoesThroughItsWriteOneBufferAtATime() throws {
        let written = LockedValue<[Int]>([])
        let calls = SystemCalls(
            read: SystemCalls.live.read,
            write: { _, _, count in
                written.withLock { $0.append(count) }
                return .success(count)
            },
            fsync: SystemCalls.live.fsync)
        var bytes: [UInt8] = [1, 2, 3, 4, 5]
        let result = bytes.withUnsafeMutableBytes { buffer in
            var vectors = [
                iovec(iov_base: nil, iov_len: 0),
                iovec(iov_base: buffer.baseAddress, iov_len: 2),
                iovec(iov_base: buffer.baseAddress! + 2, iov_len: 3),
            ]
            return calls.writev(1, &vectors, 3)
        }
        #expect(try result.get() == 2)
        #expect(written.withLock { $0 } == [2])
    }
}
