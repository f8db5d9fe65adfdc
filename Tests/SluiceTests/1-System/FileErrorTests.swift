#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import SluiceTestSupport
import Testing
@testable import Sluice

@Suite struct FileErrorTests {
    @Test(arguments: [
        (ENOENT, FileError.Code.notFound),
        (EACCES, .permissionDenied),
        (EPERM, .permissionDenied),
        (EROFS, .permissionDenied),
        (EEXIST, .alreadyExists),
        (EISDIR, .isDirectory),
        (ENOTDIR, .isDirectory),
        (ENOSPC, .noSpace),
        (EDQUOT, .noSpace),
        (EFBIG, .noSpace),
        (EIO, .io),
        (EPIPE, .closed),
        (ENOTSUP, .unsupported),
        (EINVAL, .unsupported),
        (EXDEV, .unsupported),
        (EMFILE, .unknown),
        (EBADF, .unknown),
    ])
    func errnoMapsToCode(number: CInt, code: FileError.Code) {
        let errno = ErrorNumber(rawValue: number)
        #expect(FileError.code(for: errno) == code, "errno \(number) (\(errno))")
        for error in Self.everySyscall(errno: errno) {
            #expect(error.code == code, "\(error.operation)")
            #expect(error.errno == errno, "\(error.operation)")
        }
    }

    /// Every system call's factory, each with its operation and the verb its message uses.
    static let factories: [(make: @Sendable (ErrorNumber) -> FileError, operation: FileError.Operation, message: String)] = [
        ({ .open(path: "p", errno: $0) }, .open, "cannot open 'p'"),
        ({ .create(path: "p", errno: $0) }, .create, "cannot create 'p'"),
        ({ .read(path: "p", errno: $0) }, .read, "cannot read 'p'"),
        ({ .write(path: "p", errno: $0) }, .write, "cannot write to 'p'"),
        ({ .fsync(path: "p", errno: $0) }, .fsync, "cannot sync 'p'"),
        ({ .close(path: "p", errno: $0) }, .close, "cannot close 'p'"),
        ({ .rename(path: "p", errno: $0) }, .rename, "cannot replace 'p'"),
        ({ .stat(path: "p", errno: $0) }, .stat, "cannot stat 'p'"),
        ({ .lstat(path: "p", errno: $0) }, .lstat, "cannot stat 'p'"),
        ({ .fstat(path: "p", errno: $0) }, .fstat, "cannot stat 'p'"),
        ({ .fchmod(path: "p", errno: $0) }, .fchmod, "cannot set attributes of 'p'"),
        ({ .futimens(path: "p", errno: $0) }, .futimens, "cannot set attributes of 'p'"),
        ({ .fsetxattr(path: "p", errno: $0) }, .fsetxattr, "cannot set attributes of 'p'"),
        ({ .fremovexattr(path: "p", errno: $0) }, .fremovexattr, "cannot set attributes of 'p'"),
        ({ .mkdir(path: "p", errno: $0) }, .mkdir, "cannot mkdir 'p'"),
        ({ .mkdtemp(path: "p", errno: $0) }, .mkdtemp, "cannot mkdtemp 'p'"),
        ({ .opendir(path: "p", errno: $0) }, .opendir, "cannot opendir 'p'"),
        ({ .posixSpawn(path: "p", errno: $0) }, .posixSpawn, "cannot posix_spawn 'p'"),
        ({ .wait4(path: "p", errno: $0) }, .wait4, "cannot wait4 'p'"),
        ({ .pipe2(errno: $0) }, .pipe2, "cannot pipe2"),
    ]

    static func everySyscall(errno: ErrorNumber) -> [FileError] {
        factories.map { $0.make(errno) }
    }

    @Test(arguments: factories.indices)
    func eachSystemCallHasItsFactory(index: Int) {
        let (make, operation, message) = Self.factories[index]
        let error = make(.ioError)
        #expect(error.operation == operation)
        #expect(error.description == message + ": Input/output error")
        #expect(error.location.file.hasSuffix("FileErrorTests.swift"))
        #expect(error.cause == nil && error.reason == nil)
    }

    @Test func operationsAreNamedAfterTheirSystemCalls() {
        #expect(Self.factories.map(\.operation.description) == [
            "open", "create", "read", "write", "fsync", "close", "rename", "stat", "lstat", "fstat", "fchmod",
            "futimens", "fsetxattr", "fremovexattr", "mkdir", "mkdtemp", "opendir", "posix_spawn", "wait4", "pipe2",
        ])
        #expect(Set(Self.factories.map(\.operation)).count == Self.factories.count)
    }

    @Test func descriptionNamesOperationPathAndReason() {
        let error = FileError.open(path: "x", errno: .noSuchFileOrDirectory)
        #expect(error.description == "cannot open 'x': No such file or directory")
    }

    @Test(arguments: [
        (FileError.write(path: "out", errno: .fileTooLarge), "cannot write to 'out': File too large"),
        (.rename(path: "out", errno: .permissionDenied), "cannot replace 'out': Permission denied"),
        (.fsync(path: "out", errno: .ioError), "cannot sync 'out': Input/output error"),
    ])
    func descriptionUsesAVerbPerOperation(error: FileError, expected: String) {
        #expect(error.description == expected)
    }

    @Test func descriptionEscapesThePath() {
        let path = Pathname(bytes: Array("caf".utf8) + [0xE9])
        let error = FileError.open(path: path, errno: .permissionDenied)
        #expect(error.description == #"cannot open 'caf\xE9': Permission denied"#)
    }

    @Test func descriptionWithoutPathOrErrno() {
        #expect(FileError.pipe2(errno: .ioError).description == "cannot pipe2: Input/output error")
        #expect(FileError.sameFile(destination: "f").description == "cannot write to 'f': source and destination are the same file")
        #expect(FileError(code: .io, operation: .read, path: "f").description == "cannot read 'f': io")
    }

    struct Underlying: Error, CustomStringConvertible {
        var description: String { "the record is damaged" }
    }

    @Test func causeIsShownOnlyWhenNothingElseSaysWhy() {
        let alone = FileError(code: .io, operation: .read, path: "f", cause: Underlying())
        #expect(alone.description == "cannot read 'f': the record is damaged")
        #expect(alone.cause is Underlying)
        let temporary = FileError.open(path: "dir/.sluice-x.tmp", errno: .permissionDenied)
        let named = FileError.create(path: "dir/out", errno: .permissionDenied, cause: temporary)
        #expect(named.description == "cannot create 'dir/out': Permission denied")
        #expect((named.cause as? FileError)?.path == "dir/.sluice-x.tmp")
        #expect(named.code == .permissionDenied)
    }

    @Test func refusalsSetTheirCodes() {
        #expect(FileError.sameFile(destination: "f").code == .sameFile)
        #expect(FileError.destinationExists("f").code == .alreadyExists)
        #expect(FileError.destinationExists("f").errno == .fileExists)
        #expect(FileError.isDirectory(.create, path: "d").code == .isDirectory)
        #expect(FileError.isDirectory(.read, path: "d").operation == .read)
    }

    /// The library words an existing destination as the system does; the option that would
    /// overwrite it is the command's to mention.
    @Test func destinationExistsSaysNothingOfTheCommandLine() {
        #expect(FileError.destinationExists("f").description == "cannot create 'f': File exists")
    }

    @Test func locationIsWhereTheErrorWasMade() {
        let error = FileError.read(path: "x", errno: .ioError)
        #expect(error.location.file.hasSuffix("FileErrorTests.swift"))
        #expect(error.location.line == #line - 2)
    }
}
