#include "textflag.h"

// func growStack()
// The frame size is stackReserve (stackgrow.go).
TEXT ·growStack(SB), 0, $24576-0
	RET
