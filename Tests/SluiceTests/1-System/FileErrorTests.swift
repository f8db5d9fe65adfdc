#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
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
        let errno = Errno(rawValue: number)
        #expect(FileError.code(for: errno) == code, "errno \(number) (\(errno))")
        let error = FileError.system("read", path: "x", errno: errno)
        #expect(error.code == code)
        #expect(error.errno == errno)
    }

    @Test func descriptionNamesOperationPathAndReason() {
        let error = FileError.system("open", path: "x", errno: .noSuchFileOrDirectory)
        #expect(error.description == "cannot open 'x': No such file or directory")
    }

    @Test(arguments: [
        ("write", EFBIG, "cannot write to 'out': File too large"),
        ("rename", EACCES, "cannot replace 'out': Permission denied"),
        ("fsync", EIO, "cannot sync 'out': Input/output error"),
    ])
    func descriptionUsesAVerbPerOperation(operation: String, number: CInt, expected: String) {
        #expect(FileError.system(operation, path: "out", errno: Errno(rawValue: number)).description == expected)
    }

    @Test func descriptionEscapesThePath() {
        let path = FilePath(bytes: Array("caf".utf8) + [0xE9])
        let error = FileError.system("open", path: path, errno: .permissionDenied)
        #expect(error.description == #"cannot open 'caf\xE9': Permission denied"#)
    }

    @Test func descriptionWithoutPathOrErrno() {
        #expect(FileError.system("pipe", path: nil, errno: .ioError).description == "cannot pipe: Input/output error")
        #expect(FileError.sameFile(destination: "f").description == "cannot write to 'f': source and destination are the same file")
        #expect(FileError(code: .io, operation: "read", path: "f").description == "cannot read 'f': io")
    }

    @Test func factoriesSetTheirCodes() {
        #expect(FileError.sameFile(destination: "f").code == .sameFile)
        #expect(FileError.destinationExists("f").code == .alreadyExists)
        #expect(FileError.destinationExists("f").errno == .fileExists)
        #expect(FileError.isDirectory("create", path: "d").code == .isDirectory)
    }

    @Test func locationIsWhereTheErrorWasMade() {
        let error = FileError.system("read", path: nil, errno: .ioError)
        #expect(error.location.file.hasSuffix("FileErrorTests.swift"))
        #expect(error.location.line == #line - 2)
    }
}
