// SPDX-License-Identifier: GPL-3.0-or-later
import Foundation
import LapseCore
import Testing

/// Locations as users type them become URLs, and are named back as they were typed.
@Suite struct LocationTests {
    /// Text with a scheme is that URL; anything else a file path, named back as given (relative stays relative).
    @Test(arguments: [
        ("out.mp4", true, "out.mp4"),
        ("frames/a b.jpg", true, "frames/a b.jpg"),
        ("../up/x.MP4", true, "../up/x.MP4"),
        ("/abs/x.mp4", true, "/abs/x.mp4"),
        ("https://example.org/a.mp4?key=1", false, "https://example.org/a.mp4?key=1"),
        ("http://127.0.0.1:8080/list.m3u8", false, "http://127.0.0.1:8080/list.m3u8")
    ])
    func typedLocationsAreNamedAsGiven(text: String, isFile: Bool, shown: String) {
        let url = URL(location: text)
        #expect(url.isFileURL == isFile)
        #expect(url.shown == shown)
        if isFile {
            let absolute = text.hasPrefix("/") ? text : FileManager.default.currentDirectoryPath + "/" + text
            #expect(url.openable == URL(fileURLWithPath: absolute).standardizedFileURL.path)
        } else {
            #expect(url.openable == text)
        }
    }

    /// `~` is the home folder, as a shell would have it.
    @Test func aTildeIsTheHomeFolder() {
        let home = FileManager.default.homeDirectoryForCurrentUser.path
        #expect(URL(location: "~/clip.mp4").shown == home + "/clip.mp4")
    }

    /// A path relative to another folder than the current one is given to the file system whole.
    @Test func aPathRelativeToAnotherFolderIsAbsolute() {
        let folder = URL(fileURLWithPath: "/srv/media/", isDirectory: true)
        let url = URL(fileURLWithPath: "clip.mp4", relativeTo: folder)
        #expect(url.filePath == "/srv/media/clip.mp4")
        #expect(url.shown == "/srv/media/clip.mp4")
    }

    /// Sidecars replace the extension, keep the spelling, and add to a name without one.
    @Test(arguments: [
        ("out.mp4", "out.credits.txt"), ("dir/out.final.mp4", "dir/out.final.credits.txt"), ("out", "out.credits.txt"),
        ("/abs/v.MOV", "/abs/v.credits.txt")
    ])
    func sidecarsSitBesideTheOutput(output: String, sidecar: String) {
        #expect(URL(fileURLWithPath: output).replacingExtension(with: ".credits.txt").shown == sidecar)
    }

    /// A setting's location reads from and writes to the text users type; set in code, it is written as shown.
    @Test func settingsKeepTheTextTheyWereReadFrom() throws {
        struct Setting: Codable, Equatable {
            @LocationText var output: URL?
            @LocationText var gif: URL?
            var outputText: String? { _output.quoted }
        }
        let read = try JSONDecoder().decode(Setting.self, from: Data(#"{"output": "~/out.mp4"}"#.utf8))
        #expect(read.output == URL(location: "~/out.mp4") && read.gif == nil)
        #expect(read.outputText == "~/out.mp4")
        #expect(String(decoding: try JSONEncoder().encode(read), as: UTF8.self) == #"{"output":"~\/out.mp4"}"#)
        var changed = read
        changed.output = URL(fileURLWithPath: "clips/new.mp4")
        #expect(changed.outputText == "clips/new.mp4")
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(Setting.self, from: Data(#"{"gif": 5}"#.utf8)) }
    }

    /// An error about an online input hides its query; one about a file names it as given.
    @Test func errorsNameLocationsWithoutTheirSecrets() {
        let online = LapseError(.network, URL(location: "https://example.org/v.mp4?key=SECRET"), "timed out")
        #expect(!online.description.contains("SECRET"))
        #expect(online.description.hasPrefix("https://example.org/v.mp4"))
        let file = LapseError.posix(.output, URL(location: "out/v.mp4"), "cannot write", errno: ENOSPC)
        #expect(file.description.hasPrefix("out/v.mp4: cannot write: "))
        #expect(file.cause == .posix(ENOSPC))
    }
}
