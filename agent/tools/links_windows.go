package tools

import "golang.org/x/sys/windows"

// fileLinks is the link count of the open handle fd (NTFS has hard links too).
func fileLinks(fd uintptr) (uint64, error) {
	var info windows.ByHandleFileInformation
	if err := windows.GetFileInformationByHandle(windows.Handle(fd), &info); err != nil {
		return 0, err
	}
	return uint64(info.NumberOfLinks), nil
}
