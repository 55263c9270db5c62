package io.nftproxy.config;

import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.nio.file.Path;

/**
 * Why a file the operator named could not be read, in the words an operator acts on ("permission denied", "no such
 * file", "is a directory"): the JDK's exceptions say it in their class name, and their message is often the path
 * alone ({@code NoSuchFileException: /etc/nftproxy/config.yaml}), which the operator already knows.
 */
public final class UnreadableFile {
    private UnreadableFile() {}

    public static String reason(Path file, IOException e) {
        if (e instanceof AccessDeniedException) return "permission denied";
        if (e instanceof NoSuchFileException) return "no such file";
        if (e instanceof NotDirectoryException) return "a path component is not a directory";
        if (file != null && Files.isDirectory(file)) return "is a directory";
        String detail = e instanceof FileSystemException f && f.getReason() != null ? f.getReason() : e.getMessage();
        return detail == null || detail.equals(String.valueOf(file)) ? e.getClass().getSimpleName() : detail;
    }
}
