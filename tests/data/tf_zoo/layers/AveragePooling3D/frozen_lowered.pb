
G
xPlaceholder*(
shape:ÿÿÿÿÿÿÿÿÿ*
dtype0
£
4zoo_averagepooling3d_1/average_pooling3d_1/AvgPool3D	AvgPool3Dx*
ksize	
*
data_formatNDHWC*
strides	
*
paddingVALID*
T0
S
IdentityIdentity4zoo_averagepooling3d_1/average_pooling3d_1/AvgPool3D*
T0"ª